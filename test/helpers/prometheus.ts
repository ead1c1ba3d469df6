// A strict reader of the Prometheus text exposition format (0.0.4): every
// line must be a HELP, TYPE or comment line, blank, or a well-formed sample
// of a family whose TYPE came first. Throws with the line on anything else.

export interface Exposition {
  /** Family name -> TYPE. */
  types: Map<string, string>;
  /** `name{a="x",b="y"}` (labels sorted) -> value. */
  samples: Map<string, number>;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*';
const VALUE = '[-+]?(?:[0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?|Inf|NaN)';
const LABEL_PAIR = new RegExp(`(${LABEL})="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"`, 'y');
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (${VALUE})(?: -?[0-9]+)?$`);
const TYPE_LINE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const HELP_LINE = new RegExp(`^# HELP (${NAME}) .*$`);
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'] };

function parseLabels(text: string, line: string): [string, string][] {
  const pairs: [string, string][] = [];
  let at = 0;
  while (at < text.length) {
    LABEL_PAIR.lastIndex = at;
    const match = LABEL_PAIR.exec(text);
    if (!match) throw new Error(`bad labels in "${line}"`);
    pairs.push([match[1], match[2]]);
    at = LABEL_PAIR.lastIndex;
    if (at < text.length) {
      if (text[at] !== ',') throw new Error(`bad labels in "${line}"`);
      at++;
    }
  }
  return pairs;
}

/** The family a sample belongs to, given the declared types. */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name) && !SUFFIXES[types.get(name)!]) return name;
  for (const [family, type] of types) {
    for (const suffix of SUFFIXES[type] ?? []) if (name === family + suffix) return family;
  }
  return undefined;
}

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples = new Map<string, number>();
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    const type = TYPE_LINE.exec(line);
    if (type) {
      if (types.has(type[1])) throw new Error(`second TYPE for ${type[1]}`);
      types.set(type[1], type[2]);
      continue;
    }
    if (HELP_LINE.test(line) || (line.startsWith('#') && !/^# (HELP|TYPE) /.test(line))) continue;
    const sample = SAMPLE.exec(line);
    if (!sample) throw new Error(`not a sample line: "${line}"`);
    if (!familyOf(sample[1], types)) throw new Error(`sample of an undeclared family: "${line}"`);
    const labels = parseLabels(sample[2] ?? '', line).sort(([a], [b]) => (a < b ? -1 : 1));
    const key = labels.length ? `${sample[1]}{${labels.map(([k, v]) => `${k}="${v}"`).join(',')}}` : sample[1];
    if (samples.has(key)) throw new Error(`duplicate sample ${key}`);
    samples.set(key, Number(sample[3].replace('Inf', 'Infinity')));
  }
  return { types, samples };
}
