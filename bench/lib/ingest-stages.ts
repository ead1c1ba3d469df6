// The server's own steps for one add-many body, each timed alone in this
// process on the compiled server (dist/, as `npm start` runs it): the body
// reader, the depth check, validation, prepareUpsert and applyUpsert. No
// HTTP: what is left of a request once its bytes are in. `dist` may point at
// another build (e.g. of an earlier commit) to compare; a build without
// spare-buffers.js (arena-pool.js before it) reads each body into fresh
// buffers, as it did.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as v from 'valibot';
import { median } from './measure.js';

export const STAGES = ['reader', 'depth', 'valibot', 'prepare', 'apply'] as const;
export type StageTimes = Record<(typeof STAGES)[number] | 'total', number>;

type Lap = (stage: (typeof STAGES)[number] | 'untimed') => void;

/** A function that runs every stage of one add-many of `bytes` and reports each duration to `lap`. */
async function stagesOf(dist: string, bytes: Buffer) {
  const load = (path: string) => import(join(dist, path));
  // Builds before the body pipeline moved to http/body/ keep their old paths and names.
  const loadEither = (path: string, old: string) => load(path).catch(() => load(old));
  const [reader, shape, schemas, config, index, kernel, errors] = await Promise.all([
    loadEither('http/body/vector-reader.js', 'http/vector-json.js'),
    load('schemas/json-shape.js'),
    load('schemas/index.js'),
    load('config.js'),
    load('index/vector-index.js'),
    load('kernel/load-node.js'),
    load('errors.js'),
  ]);
  const readBody = reader.readVectorBody ?? reader.parseVectorJson;
  const pools = await loadEither('http/body/spare-buffers.js', 'http/arena-pool.js').catch(() => null);
  const Pool = pools && (pools.SpareBuffers ?? pools.ArenaPool);
  const Lease = pools && (pools.BufferLease ?? pools.ArenaLease);
  const pool = pools ? new Pool() : null;
  // A build with WebAssembly body buffers reads a large vector body into one (untimed
  // here: receiving copies the bytes into whatever buffer takes them).
  const spaces = await loadEither('http/body/wasm-body-buffer.js', 'http/body-space.js').catch(() => null);
  const Space = spaces && (spaces.WasmBodyBuffer ?? spaces.BodySpace);
  const space = spaces ? new Space(kernel.loadKernelModule(), Space.bytesFor(bytes.length)) : null;
  const requestSchemas = schemas.requestSchemas(config.loadConfig({}, {}));
  // Builds whose reader hands over a CheckedBatch validate add-many through safeParseAddMany.
  const checked = await load('schemas/checked-batch.js').catch(() => null);
  const validate = (body: unknown) => {
    if (!checked) return v.parse(requestSchemas.AddManyRequestSchema, body);
    const result = checked.safeParseAddMany(requestSchemas, body);
    if (!result.success) throw new Error('invalid add-many body');
    return result.output;
  };
  const target = new index.VectorIndex(kernel.loadKernelModule(), 100_000);
  const pathOf = (i: number) => errors.pointer('vectors', i);
  return (lap: Lap) => {
    const lease = pool ? new Lease(pool) : undefined;
    let input = bytes;
    if (space) {
      input = space.open(bytes.length);
      input.set(bytes);
      lap('untimed');
    }
    const body = readBody(input, lease, space ?? undefined);
    lap('reader');
    shape.firstTooDeep(body, 40);
    lap('depth');
    const { vectors } = validate(body);
    lap('valibot');
    const plan = target.prepareUpsert(vectors, { pathOf });
    lap('prepare');
    target.applyUpsert(plan);
    lap('apply');
    lease?.release();
  };
}

/** Median milliseconds of each stage over `rounds` runs (the first quarter is warm-up), builds run alternately. */
export async function timeStages(dists: Record<string, string>, bytes: Buffer, rounds: number): Promise<Record<string, StageTimes>> {
  const runs = await Promise.all(Object.entries(dists).map(async ([name, dist]) => ({ name, run: await stagesOf(dist, bytes) })));
  const samples = Object.fromEntries(runs.map(({ name }) => [name, Object.fromEntries(STAGES.map((s) => [s, [] as number[]]))]));
  for (let r = 0; r < rounds; r++) {
    for (const { name, run } of runs) {
      let t = performance.now();
      run((stage) => {
        const now = performance.now();
        if (stage !== 'untimed') samples[name][stage].push(now - t);
        t = now;
      });
    }
  }
  return Object.fromEntries(
    runs.map(({ name }) => {
      const times = Object.fromEntries(STAGES.map((s) => [s, median(samples[name][s].slice(rounds >> 2))])) as StageTimes;
      times.total = STAGES.reduce((sum, s) => sum + times[s], 0);
      return [name, times];
    }),
  );
}
