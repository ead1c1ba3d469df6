// npm run bench:persistence: what DATA_DIR costs on the write path, against
// the default (no DATA_DIR), through the same steps a route takes (validate,
// log, apply), interleaved in one process. Reads are timed too: they append
// at most one small record per session per min(60 s, TTL/20).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { loadKernelModule } from '../src/kernel/load-node.js';
import { SessionStore } from '../src/sessions/session-store.js';
import { uniformVectors, rowOf } from './lib/data.js';
import { fmt, interleave, printTable, quick, writeResults } from './lib/measure.js';

const BATCH = quick ? 20 : 100;
const DIM = 128;
const data = uniformVectors(BATCH, DIM, 7);
const records = Array.from({ length: BATCH }, (_, i) => ({ id: `v${i}`, vector: rowOf(data, DIM, i), metadata: { i, tag: 'x' } }));
const dir = mkdtempSync(join(tmpdir(), 'tempvec-bench-'));

function setUp(dataDir: string) {
  const store = new SessionStore(loadConfig({}, { dataDir }), loadKernelModule());
  const { token, session } = store.create();
  session.index.upsert(records);
  return { store, token, session };
}

const plain = setUp('');
const logged = setUp(dir);

/** The steps of POST /vectors/add-many: validate, log (DATA_DIR only), apply. Replaces the same ids, so memory stays flat. */
function addMany({ store, session }: ReturnType<typeof setUp>) {
  const plan = session.index.prepareUpsert(records);
  store.journal(session, (log, at) => log.upsert(session, plan, at));
  session.index.applyUpsert(plan);
}

/** The steps of POST /vectors/get: authenticate (which may log a touch), read. */
function read({ store, token }: ReturnType<typeof setUp>) {
  return store.authenticate(token).index.get('v1');
}

const timings = interleave([
  { name: `add-many ${BATCH}x${DIM}, default`, run: () => addMany(plain) },
  { name: `add-many ${BATCH}x${DIM}, DATA_DIR`, run: () => addMany(logged) },
  { name: 'get, default', run: () => read(plain) },
  { name: 'get, DATA_DIR', run: () => read(logged) },
], { rounds: quick ? 3 : 9 });
rmSync(dir, { recursive: true, force: true });

const base = (name: string) => timings.find((t) => t.name === name.replace('DATA_DIR', 'default'))!.ms;
printTable(timings.map((t) => ({ case: t.name, 'ms per call (median)': t.ms, 'x default': fmt(t.ms / base(t.name), 2) })));
console.log('(appends reach the OS before the call returns; no fsync per record; compaction included as it comes due)');
writeResults('persistence', { timings });
