// npm run bench:persistence: issue 25's goals, side by side in one run.
// First what DATA_DIR costs on the write path, against the default (no
// DATA_DIR), and what FSYNC=always adds on top (one fdatasync per batch of
// changes in flight), all interleaved round by round in one process, through
// the same steps a route takes (validate, log, apply, wait for the disk).
// Reads are timed too: they append at most one small record per session per
// min(60 s, TTL/20). Then a 50k x 1024 session with 1 KiB of metadata per
// vector (5k with --quick): disk against the raw bytes, its compaction (extra
// JS heap, a neighbour's search latency) and its reopen (time, the longest
// event-loop stall, transient memory). Last, the largest add-many made ready
// ahead of its turn (texts analysed, record encoded in slices): the longest
// event-loop delay meanwhile.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadConfig, type FsyncMode } from '../src/config.js';
import { loadKernelModule } from '../src/kernel/load-node.js';
import { SessionStore } from '../src/sessions/session-store.js';
import type { Session } from '../src/sessions/session.js';
import { prepareTextsAhead } from '../src/sessions/texts-ahead.js';
import { hashToken } from '../src/sessions/token.js';
import { uniformVectors, rowOf } from './lib/data.js';
import { fmt, median, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';
import { Slices } from '../src/limits/slices.js';

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

/**
 * The steps of POST /vectors/add-many after its body is parsed, through the code the route runs
 * (store.writes: the write turn, validate and the memory budget's checks, grow, log with DATA_DIR,
 * apply), and with FSYNC=always the wait for the disk. Replaces the same ids, so memory stays flat.
 */
async function addMany({ store, session }: Setup): Promise<void> {
  const { writes } = store;
  await writes.inTurn(session, () => writes.upsert(session, writes.prepareUpsert(session, records, {})));
  await store.durable(session);
}

/** The steps of POST /vectors/get: authenticate (which may log a touch), read. */
function read({ store, token }: Setup) {
  return (store.authenticate(token) as Session).index.get('v1');
}

interface AsyncCase {
  name: string;
  calls: number;
  run: () => Promise<unknown> | unknown;
}

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
  const calls = quick ? 20 : 100;
  const timings = await interleaveAsync(
    [
      { name: `add-many ${BATCH}x${DIM}, default`, calls, run: () => addMany(plain) },
      { name: `add-many ${BATCH}x${DIM}, DATA_DIR`, calls, run: () => addMany(logged) },
      { name: `add-many ${BATCH}x${DIM}, DATA_DIR + FSYNC=always, 1 in flight`, calls: calls / 10, run: () => addMany(synced) },
      // IN_FLIGHT changes on one session at once: they share fdatasyncs (group commit). Time per change.
      {
        name: `add-many ${BATCH}x${DIM}, DATA_DIR + FSYNC=always, ${IN_FLIGHT} in flight`,
        calls: calls / 10,
        run: async () => {
          await Promise.all(Array.from({ length: IN_FLIGHT }, () => addMany(many)));
        },
      },
      { name: 'get, default', calls: calls * 10, run: () => read(plain) },
      { name: 'get, DATA_DIR', calls: calls * 10, run: () => read(logged) },
      { name: 'get, DATA_DIR + FSYNC=always', calls: calls * 10, run: () => read(synced) },
    ],
    quick ? 3 : 15,
  );
  timings[3].ms /= IN_FLIGHT;
  timings[3].rounds = timings[3].rounds.map((ms) => ms / IN_FLIGHT);
  const base = (name: string) => timings.find((t) => t.name === name.replace(/DATA_DIR.*?(, \d in flight)?$/, 'default'))!.ms;
  printTable(timings.map((t) => ({ case: t.name, 'ms per change or read (median)': fmt(t.ms, 4), 'x default': fmt(t.ms / base(t.name), 2) })));
  // The goal's ratio: the median of each round's own ratio (its two cases run next to each other), steadier on a shared machine than the ratio of medians.
  const cost = median(timings[1].rounds.map((ms, r) => ms / timings[0].rounds[r]));
  console.log(
    `add-many DATA_DIR / default: ${fmt(cost, 2)} (median of ${timings[0].rounds.length} rounds' ratios; ratio of the medians ${fmt(timings[1].ms / timings[0].ms, 2)})`,
  );
  printTable([
    { goal: `add-many ${BATCH} x ${DIM}, DATA_DIR / default`, measured: fmt(cost, 2), target: '<= 1.5', ok: String(cost <= 1.5) },
    {
      goal: `FSYNC=always, ${IN_FLIGHT} in flight: ms per change (FSYNC=never: ${fmt(timings[1].ms, 4)})`,
      measured: fmt(timings[3].ms, 4),
      target: `${fmt(timings[3].ms / timings[1].ms, 1)}x never`,
      ok: '',
    },
  ]);
  console.log('(appends reach the OS before the call returns; FSYNC=always also waits for fdatasync; compaction runs in the background as it comes due)');
  await Promise.all([plain, logged, synced, many].map((s) => s.store.whenIdle()));
  return timings;
}

/** Samples, every millisecond while a job runs: the longest gap between ticks (an event-loop stall) and the peak of `read`. */
async function sampled<T>(job: () => Promise<T>, read: () => number): Promise<{ result: T; ms: number; stallMs: number; peak: number; base: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const base = read();
  let peak = base;
  let last = performance.now();
  let gap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
    peak = Math.max(peak, read());
  }, 1);
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, 5));
  const t0 = performance.now();
  const result = await job();
  const ms = performance.now() - t0;
  peak = Math.max(peak, read());
  histogram.disable();
  clearInterval(timer);
  return { result, ms, stallMs: Math.max(gap, histogram.max / 1e6), peak, base };
}

const gc = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

const MiB = 2 ** 20;
const jsMemory = () => {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};
/** About 1 KiB of metadata JSON per vector (the reopen case). */
const metadataOf = (i: number) => ({ i, group: i % 16, text: `${'lorem ipsum dolor sit amet '.repeat(37)}${i}`.slice(0, 990) });

/**
 * The large session: 50k x 1024 with 1 KiB of metadata per vector,
 * filled through the log (compactions as they come due), then compacted
 * while a neighbour session searches, then reopened.
 */
async function largeSession() {
  const n = quick ? 5000 : 50_000;
  const dim = 1024;
  const dataDir = mkdtempSync(join(tmpdir(), 'tempvec-bench-large-'));
  dirs.push(dataDir);
  const config = loadConfig({}, { dataDir, maxVectorsPerSession: n, memoryBudgetBytes: 0 });
  const store = new SessionStore(config, kernel);
  const { token, session } = store.create();
  const neighbour = store.create().session;
  const small = uniformVectors(1000, 384, 5);
  neighbour.index.upsert(
    Array.from({ length: 1000 }, (_, i) => ({ id: `n${i}`, vector: rowOf(small, 384, i) })),
    { metric: 'cosine' },
  );
  const path = join(dataDir, `${hashToken(token)}.log`);
  const batch = 500;
  const block = uniformVectors(batch, dim, 11);
  let raw = 0;
  let worstBefore = 0;
  const metadataBytes = new Map<number, number>();
  // The fill, then every vector written again (replacing itself): the log then holds dead records until compactions catch up.
  const fill = await sampled(
    async () => {
      for (let from = 0; from < 2 * n; from += batch) {
        const rows = Array.from({ length: batch }, (_, i) => ({
          id: `v${(from + i) % n}`,
          vector: rowOf(block, dim, (from + i) % batch),
          metadata: metadataOf((from + i) % n),
        }));
        const plan = session.index.prepareUpsert(rows, { metric: 'l2' });
        // Larger than a write piece (1 MiB): logged in pieces off the event loop, then applied.
        await session.index.applyUpsertSliced(plan, new Slices(Infinity), () => store.journal(session, (log, at) => log.upsert(session, plan, at)));
        for (let i = 0; i < batch; i++) metadataBytes.set((from + i) % n, plan.metadataJson[i]?.bytes ?? 0);
        raw = session.index.size * dim * 4 + [...metadataBytes.values()].reduce((sum, bytes) => sum + bytes, 0);
        worstBefore = Math.max(worstBefore, statSync(path).size / raw);
        await new Promise((resolve) => setImmediate(resolve)); // one request per turn of the loop, as a server sees them
      }
      await store.whenIdle();
    },
    () => 0,
  );

  // Compaction, with a neighbour searching every 5 ms: extra JS heap, and the neighbour's latency.
  gc();
  const latencies: number[] = [];
  let searching = true;
  const query = [rowOf(small, 384, 3)];
  const searches = (async () => {
    while (searching) {
      const due = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 5));
      neighbour.index.search(query, { topK: 10 });
      latencies.push(performance.now() - due - 5);
    }
  })();
  const compaction = await sampled(
    () => store.compactLog(session),
    () => process.memoryUsage().heapUsed,
  );
  searching = false;
  await searches;
  const afterCompaction = statSync(path).size;
  latencies.sort((a, b) => a - b);
  const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))];

  // Reopen in a new store: time, the longest stall, and transient memory: the peak of the JS heap and
  // array buffers (where the reopen's buffers live; the session's linear memory is neither) above
  // what they hold once it is done and collected (the session's own ids, metadata store and index).
  const own = session.index.stats().memoryBytes + session.index.stats().metadataBytes + session.index.stats().heapBytes;
  session.index.reset();
  neighbour.index.reset();
  gc();
  const reopening = new SessionStore(loadConfig({}, { ...config }), kernel);
  let countedPeak = 0;
  const reopen = await sampled(
    async () => {
      const reopened = await reopening.authenticate(token);
      if (reopened.index.size !== n) throw new Error(`reopened ${reopened.index.size} of ${n} vectors`);
      return reopened;
    },
    () => {
      countedPeak = Math.max(countedPeak, reopening.budget.persistenceBytes);
      return jsMemory();
    },
  );
  const reopened = reopen.result;
  const reopenedOwn = reopened.index.stats().memoryBytes + reopened.index.stats().metadataBytes + reopened.index.stats().heapBytes;
  gc();
  const transient = reopen.peak - jsMemory();
  reopened.index.reset();

  const rows = [
    {
      goal: `fill ${n} x ${dim} + 1 KiB metadata, then write each again (${(2 * n) / batch} add-many of ${batch}): disk / raw, worst`,
      measured: fmt(worstBefore, 2),
      target: '<= 2.3',
      ok: String(worstBefore <= 2.3),
    },
    { goal: 'disk / raw after compaction', measured: fmt(afterCompaction / raw, 3), target: '<= 1.15', ok: String(afterCompaction / raw <= 1.15) },
    {
      goal: 'compaction: extra JS heap (peak heapUsed above its start), MiB',
      measured: fmt((compaction.peak - compaction.base) / MiB, 1),
      target: '<= 16',
      ok: String(compaction.peak - compaction.base <= 16 * MiB),
    },
    {
      goal: `compaction (${fmt(compaction.ms / 1000, 2)} s): neighbour search p99 (1k x 384, every 5 ms, ${latencies.length} searches), ms`,
      measured: fmt(p99, 1),
      target: '< 50',
      ok: String(p99 < 50),
    },
    { goal: 'compaction: longest event-loop stall, ms', measured: fmt(compaction.stallMs, 1), target: '', ok: '' },
    { goal: 'reopen: time, s', measured: fmt(reopen.ms / 1000, 3), target: '<= 1', ok: String(reopen.ms <= 1000) },
    { goal: 'reopen: longest event-loop stall, ms', measured: fmt(reopen.stallMs, 1), target: '<= 50', ok: String(reopen.stallMs <= 50) },
    {
      goal: 'reopen: transient memory (peak JS heap + array buffers above what the session holds after it), MiB',
      measured: fmt(transient / MiB, 1),
      target: '<= 64',
      ok: String(transient <= 64 * MiB),
    },
    { goal: 'reopen: its buffers as the memory budget counts them (peak), MiB', measured: fmt(countedPeak / MiB, 1), target: '', ok: '' },
  ];
  printTable(rows);
  console.log(
    `(raw: ${fmt(raw / MiB, 0)} MiB of float32 rows and metadata JSON; the session's own memory: ${fmt(own / MiB, 0)} MiB before the reopen, ${fmt(reopenedOwn / MiB, 0)} MiB after; fill took ${fmt(fill.ms / 1000, 1)} s, longest stall ${fmt(fill.stallMs, 1)} ms, including each ${batch} x ${dim} add-many call itself)`,
  );
  return rows;
}

/**
 * The largest add-many (a 32 MiB body: 1000 x 1024 with 8 KiB of metadata and 20 KB of text each),
 * made ready ahead of its write turn as the route does: its texts analysed, then its plan made and
 * its log record encoded, in slices. How long that takes, and the longest event-loop delay meanwhile.
 */
async function largestAddMany() {
  const { store } = setUp(true);
  const { session } = store.create();
  const count = quick ? 100 : 1000;
  const batch = Array.from({ length: count }, (_, i) => ({
    id: `large${i}`,
    vector: Float32Array.from({ length: 1024 }, (_, j) => Math.sin(i + j)),
    metadata: { i, body: 'x'.repeat(7900) },
    text: `word${i} `.repeat(2500).slice(0, 20_000),
  }));
  const runs = [];
  for (let r = 0; r < 3; r++) {
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const t0 = performance.now();
    const preparedTexts = await prepareTextsAhead(session, batch, {});
    const analysedMs = performance.now() - t0;
    const encoded = await store.encodeUpsert(session, batch, preparedTexts ? { preparedTexts } : {});
    const ms = performance.now() - t0;
    delay.disable();
    runs.push({ ms, analysedMs, stallMs: delay.max / 1e6, recordBytes: encoded?.bytes[0].length ?? 0 });
  }
  printTable(
    runs.map((run, r) => ({
      [`largest add-many (${count} x 1024, 8 KiB metadata, 20 KB text), ready ahead of its turn`]: `run ${r + 1}`,
      'texts analysed, ms': fmt(run.analysedMs, 1),
      'then plan and record, ms': fmt(run.ms - run.analysedMs, 1),
      'record, MiB': fmt(run.recordBytes / MiB, 1),
      'longest event-loop delay, ms': fmt(run.stallMs, 1),
    })),
  );
  return runs;
}

try {
  const timings = await writePath();
  const large = await largeSession();
  const largest = await largestAddMany();
  writeResults('persistence', { timings, large, largest, tables: { goals: large } });
} finally {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
