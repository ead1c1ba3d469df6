// npm run bench:persistence: what DATA_DIR costs on the write path, against
// the default (no DATA_DIR), and what FSYNC=always adds on top (one
// fdatasync per batch of changes in flight), all interleaved round by round
// in one process, through the same steps a route takes (validate, log,
// apply, wait for the disk). Reads are timed too: they append at most one
// small record per session per min(60 s, TTL/20). Then the longest stall of
// the event loop (perf_hooks.monitorEventLoopDelay and a 1 ms timer) while a
// 50k x 1024 session's log is compacted and while it is reopened.
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { loadConfig, type FsyncMode } from '../src/config.js';
import { loadKernelModule } from '../src/kernel/load-node.js';
import { SessionStore } from '../src/sessions/session-store.js';
import type { Session } from '../src/sessions/session.js';
import { hashToken } from '../src/sessions/token.js';
import { uniformVectors, rowOf } from './lib/data.js';
import { fmt, median, printTable, quick, writeResults } from './lib/measure.js';

const BATCH = quick ? 20 : 100;
const DIM = 128;
const IN_FLIGHT = 8;
const data = uniformVectors(BATCH, DIM, 7);
const records = Array.from({ length: BATCH }, (_, i) => ({ id: `v${i}`, vector: rowOf(data, DIM, i), metadata: { i, tag: 'x' } }));
const kernel = loadKernelModule();
const dirs: string[] = [];

function setUp(persist: boolean, fsync: FsyncMode = 'never') {
  const dataDir = persist ? mkdtempSync(join(tmpdir(), 'tempvec-bench-')) : '';
  if (persist) dirs.push(dataDir);
  const store = new SessionStore(loadConfig({}, { dataDir, fsync }), kernel);
  const { token, session } = store.create();
  session.index.upsert(records);
  return { store, token, session };
}
type Setup = ReturnType<typeof setUp>;

/** The steps of POST /vectors/add-many: validate, log (DATA_DIR only), apply, and (FSYNC=always) wait for the disk. Replaces the same ids, so memory stays flat. */
function addMany({ store, session }: Setup): Promise<void> | undefined {
  const plan = session.index.prepareUpsert(records);
  store.journal(session, (log, at) => log.upsert(session, plan, at));
  session.index.applyUpsert(plan);
  return store.durable(session);
}

/** The steps of POST /vectors/get: authenticate (which may log a touch), read. */
function read({ store, token }: Setup) {
  return (store.authenticate(token) as Session).index.get('v1');
}

interface AsyncCase { name: string; calls: number; run: () => Promise<unknown> | unknown }

/** Like measure.interleave, for cases that may wait for the disk: median ms per call over `rounds` rotating rounds. */
async function interleaveAsync(cases: AsyncCase[], rounds: number) {
  for (const c of cases) await c.run();
  const perRound = cases.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < cases.length; k++) {
      const i = (k + r) % cases.length;
      const t0 = performance.now();
      for (let n = 0; n < cases[i].calls; n++) await cases[i].run();
      perRound[i].push((performance.now() - t0) / cases[i].calls);
    }
  }
  return cases.map((c, i) => ({ name: c.name, ms: median(perRound[i]), rounds: perRound[i] }));
}

async function writePath() {
  const plain = setUp(false);
  const logged = setUp(true);
  const synced = setUp(true, 'always');
  const many = setUp(true, 'always');
  const calls = quick ? 20 : 200;
  const timings = await interleaveAsync([
    { name: `add-many ${BATCH}x${DIM}, default`, calls, run: () => addMany(plain) },
    { name: `add-many ${BATCH}x${DIM}, DATA_DIR`, calls, run: () => addMany(logged) },
    { name: `add-many ${BATCH}x${DIM}, DATA_DIR + FSYNC=always, 1 in flight`, calls: calls / 10, run: () => addMany(synced) },
    // IN_FLIGHT changes on one session at once: they share fdatasyncs (group commit). Time per change.
    { name: `add-many ${BATCH}x${DIM}, DATA_DIR + FSYNC=always, ${IN_FLIGHT} in flight`, calls: calls / 10, run: async () => {
      await Promise.all(Array.from({ length: IN_FLIGHT }, () => addMany(many)));
    } },
    { name: 'get, default', calls: calls * 10, run: () => read(plain) },
    { name: 'get, DATA_DIR', calls: calls * 10, run: () => read(logged) },
    { name: 'get, DATA_DIR + FSYNC=always', calls: calls * 10, run: () => read(synced) },
  ], quick ? 3 : 7);
  timings[3].ms /= IN_FLIGHT;
  timings[3].rounds = timings[3].rounds.map((ms) => ms / IN_FLIGHT);
  const base = (name: string) => timings.find((t) => t.name === name.replace(/DATA_DIR.*?(, \d in flight)?$/, 'default'))!.ms;
  printTable(timings.map((t) => ({ case: t.name, 'ms per change or read (median)': fmt(t.ms, 4), 'x default': fmt(t.ms / base(t.name), 2) })));
  console.log('(appends reach the OS before the call returns; FSYNC=always also waits for fdatasync; compaction runs in the background as it comes due)');
  await Promise.all([plain, logged, synced, many].map((s) => s.store.whenIdle()));
  return timings;
}

/** Longest event-loop stall while `job` runs: monitorEventLoopDelay's max and the longest gap between 1 ms timer ticks. */
async function longestStall(job: () => Promise<unknown>): Promise<{ jobMs: number; histogramMaxMs: number; timerGapMaxMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let last = performance.now();
  let gap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, 1);
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, 5));
  const t0 = performance.now();
  await job();
  const jobMs = performance.now() - t0;
  await new Promise((resolve) => setTimeout(resolve, 5));
  histogram.disable();
  clearInterval(timer);
  return { jobMs, histogramMaxMs: histogram.max / 1e6, timerGapMaxMs: gap };
}

async function largeSession() {
  const n = quick ? 5000 : 50_000;
  const dim = 1024;
  const dataDir = mkdtempSync(join(tmpdir(), 'tempvec-bench-large-'));
  dirs.push(dataDir);
  const config = loadConfig({}, { dataDir, maxVectorsPerSession: n, memoryBudgetBytes: 0 });
  const store = new SessionStore(config, kernel);
  const { token, session } = store.create();
  const batch = 1000;
  const block = uniformVectors(batch, dim, 11);
  const write = (from: number) => {
    const rows = Array.from({ length: batch }, (_, i) => ({ id: `v${from + i}`, vector: rowOf(block, dim, (from + i) % batch), metadata: { i: from + i } }));
    const plan = session.index.prepareUpsert(rows, { metric: 'l2' });
    store.journal(session, (log, at) => log.upsert(session, plan, at));
    session.index.applyUpsert(plan);
  };
  const writeStall = await longestStall(async () => {
    for (let from = 0; from < n; from += batch) {
      write(from);
      await store.whenIdle(); // compactions that come due as the log doubles
      await new Promise((resolve) => setImmediate(resolve)); // one request per turn of the loop, as a server sees them
    }
  });
  const path = join(dataDir, `${hashToken(token)}.log`);
  await store.compactLog(session);
  const logBytes = statSync(path).size;
  // The same log in a second directory, for the same jobs run in one piece (the alternative).
  const copyDir = mkdtempSync(join(tmpdir(), 'tempvec-bench-large-'));
  dirs.push(copyDir);
  copyFileSync(path, join(copyDir, basename(path)));
  const variants = [
    { name: 'in slices (default)', dataDir, sliceMs: undefined },
    { name: 'in one piece', dataDir: copyDir, sliceMs: Infinity },
  ];
  const stalls = new Map<string, { reopen: number[]; compaction: number[] }>(variants.map((v) => [v.name, { reopen: [], compaction: [] }]));
  for (let round = 0; round < 2; round++) {
    for (const variant of round % 2 ? [...variants].reverse() : variants) {
      const reopening = new SessionStore(loadConfig({}, { ...config, dataDir: variant.dataDir }), kernel, Date.now, true, { journalSliceMs: variant.sliceMs });
      let reopened: Session | undefined;
      const reopen = await longestStall(async () => {
        reopened = await reopening.authenticate(token);
        if (reopened.index.size !== n) throw new Error(`reopened ${reopened.index.size} of ${n} vectors`);
      });
      const compaction = await longestStall(() => reopening.compactLog(reopened!));
      stalls.get(variant.name)!.reopen.push(reopen.timerGapMaxMs, reopen.histogramMaxMs);
      stalls.get(variant.name)!.compaction.push(compaction.timerGapMaxMs, compaction.histogramMaxMs);
      reopened!.index.reset();
    }
  }
  const worst = (xs: number[]) => Math.max(...xs);
  const sliced = stalls.get(variants[0].name)!;
  const whole = stalls.get(variants[1].name)!;
  const rows = [
    { case: `${n / batch} add-many of ${batch} x ${dim}, compactions as due, in slices`, 'longest stall ms': fmt(writeStall.timerGapMaxMs, 1), 'x in one piece': '' },
    ...(['reopen', 'compaction'] as const).flatMap((job) => [
      { case: `${job}, ${n} x ${dim} (log ${fmt(logBytes / 2 ** 20, 0)} MiB), in slices`, 'longest stall ms': fmt(worst(sliced[job]), 1), 'x in one piece': fmt(worst(sliced[job]) / worst(whole[job]), 3) },
      { case: `${job}, ${n} x ${dim}, in one piece`, 'longest stall ms': fmt(worst(whole[job]), 1), 'x in one piece': '1.000' },
    ]),
  ];
  printTable(rows);
  console.log('(longest event-loop stall over 2 rounds, the larger of monitorEventLoopDelay\'s max and the longest gap between 1 ms timer ticks; goal: under ~50 ms for compaction and reopen; the add-many row includes each 1000 x 1024 add-many call itself)');
  return rows;
}

try {
  const timings = await writePath();
  const stalls = await largeSession();
  writeResults('persistence', { timings, stalls });
} finally {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
