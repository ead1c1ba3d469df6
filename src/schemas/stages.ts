// The search stages' fields of /search and /search-many (src/index/search/stages.ts
// runs them): mmr, groupBy and decay, each checked whole here; the
// combinations that make no sense are refused by the index (checkStages), so
// the SDK's LocalIndex refuses them as the server does.
import * as v from 'valibot';
import { SPEC_LIMITS } from '../config.js';
import { dateMs } from '../index/search/decay.js';
import { utf8StringSchema } from './common.js';

const PathSchema = v.pipe(
  utf8StringSchema(SPEC_LIMITS.maxMetadataPathBytes, 'a metadata path'),
  v.minLength(1),
  v.description(
    `A metadata path as filters read it ("a.b": key b of the object at a, or of each object in an array at a); at most ${SPEC_LIMITS.maxMetadataPathBytes} bytes.`,
  ),
);

const MmrSchema = v.pipe(
  v.strictObject({
    diversity: v.pipe(v.number(), v.minValue(0), v.maxValue(1), v.description('0: a plain search; 1: diversity alone. MMR lambda = 1 - diversity.')),
    candidates: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.maxValue(SPEC_LIMITS.maxMmrCandidates),
        v.description(`The exact top rows MMR picks from; raised to topK when smaller. Default ${SPEC_LIMITS.defaultMmrCandidates}.`),
      ),
      SPEC_LIMITS.defaultMmrCandidates,
    ),
  }),
  v.description(
    "Maximal marginal relevance: the topK hits picked greedily from the exact top `candidates`, each maximising (1 - diversity) x its score - diversity x its greatest similarity to a hit already picked (the session metric between stored vectors; l2 as minus the distance); the first is the best match. Hits come in pick order, each with its `mmrRank`; `score` stays the query's score. Not with groupBy.",
  ),
);

const GroupBySchema = v.pipe(
  v.strictObject({
    path: PathSchema,
    size: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(SPEC_LIMITS.minGroupSize),
        v.maxValue(SPEC_LIMITS.maxGroupSize),
        v.description(`Hits per group (default ${SPEC_LIMITS.defaultGroupSize}).`),
      ),
      SPEC_LIMITS.defaultGroupSize,
    ),
  }),
  v.description(
    'Answer `groups` instead of `results`: the topK groups of the filtered rows by the scalar at `path` (string, number, boolean or null), ordered by their best hit, each with its best `size` hits. A row whose value is an array joins the group of each element; a row without a scalar there (missing, or an object) is left out. Exact over every filtered row. Not with mmr.',
  ),
);

/** A decay origin that is a date: ISO-8601 (a date, or a date and time with its zone), or "now". */
const DateOriginSchema = v.pipe(
  v.string(),
  v.check(
    (text) => text === 'now' || !Number.isNaN(dateMs(text)),
    'a decay origin must be a number, "now" or an ISO-8601 date (a time needs its zone: Z or +hh:mm)',
  ),
);

const DecaySchema = v.pipe(
  v.strictObject({
    path: PathSchema,
    origin: v.pipe(
      v.union([v.pipe(v.number(), v.finite()), DateOriginSchema]),
      v.description('A number, or a date (ISO-8601, or "now": the time of the search): then the values read are ISO-8601 dates and scale is in milliseconds.'),
    ),
    scale: v.pipe(v.number(), v.finite(), v.gtValue(0), v.description('The distance from the origin where the decay is `midpoint` (milliseconds for dates).')),
    midpoint: v.optional(
      v.pipe(v.number(), v.gtValue(0), v.ltValue(1), v.description(`The decay at |x - origin| = scale (default ${SPEC_LIMITS.defaultDecayMidpoint}).`)),
      SPEC_LIMITS.defaultDecayMidpoint,
    ),
    curve: v.optional(
      v.pipe(
        v.picklist(['exp', 'gauss', 'linear']),
        v.description(
          'exp: midpoint^(d / scale); gauss: midpoint^((d / scale)^2); linear: max(0, 1 - (1 - midpoint) d / scale), 0 from scale / (1 - midpoint). d = |x - origin|.',
        ),
      ),
      'exp',
    ),
    weight: v.optional(
      v.pipe(v.number(), v.minValue(0), v.maxValue(1), v.description(`The decay's share of the final score (default ${SPEC_LIMITS.defaultDecayWeight}).`)),
      SPEC_LIMITS.defaultDecayWeight,
    ),
  }),
  v.description(
    "Score boost by a metadata value's distance from an origin, over every filtered row: score = (1 - weight) x similarity + weight x decay (l2: similarity is minus the distance), replacing `score`; a row without a value there has decay 0, one with several (an array) takes the nearest. scoreThreshold then applies to this score (at least it). Runs before mmr or groupBy.",
  ),
);

/** The optional stage fields of a search request. */
export const stageFields = {
  mmr: v.optional(MmrSchema),
  groupBy: v.optional(GroupBySchema),
  decay: v.optional(DecaySchema),
};
