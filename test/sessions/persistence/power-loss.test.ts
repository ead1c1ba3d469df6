// The power-loss harness: sessions written through the store (as the routes
// write them: authenticate, a change in its turn, wait for durable()), with
// compactions and imports under way, on a PowerLossFs that loses power at a
// random operation; then the directory the disk holds is reopened and every
// session compared with its history. FSYNC=always: nothing acknowledged is
// lost. FSYNC=never: each session is a prefix of its history, never set aside.
// POWER_LOSS_POINTS sets the crash points of a run (the default keeps the
// suite fast; the issue's run is POWER_LOSS_POINTS=10000); POWER_LOSS_HOLES=1
// runs the scenarios of holes not fixed yet too. Changes larger than
// PIECE_BYTES are written in pieces (as those over 1 MiB are in production),
// so imports are, and many crash points fall between two pieces of one.
import { expect } from 'chai';
import { crc32 } from 'node:zlib';
import { loadConfig, type FsyncMode } from '../../../src/config.js';
import { ApiError } from '../../../src/errors.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { SessionStore } from '../../../src/sessions/session-store.js';
import type { Session } from '../../../src/sessions/session.js';
import { PowerLossFs, type Random } from '../../helpers/power-loss-fs.js';
import { seededRng as seeded } from '../../helpers/random.js';

const kernel = loadKernelModule();
const DIR = '/power-loss';
const POINTS = Number(process.env.POWER_LOSS_POINTS ?? 400);
const POOL = 12;
/** The journal's write piece here: an import (about 30 KB) goes out in about 15 pieces, an add of a few rows at once. */
const PIECE_BYTES = 2048;

/** One session as the harness follows it: its state after each change, and the last change acknowledged. */
interface Tracked {
  token: string;
  model: Map<string, string>;
  sum: number;
  /** The state's fingerprint after each change; history[0] is the empty session. */
  history: number[];
  acked: number;
  ackedAtCrash: number;
  importIds: number;
}

interface Scenario {
  fsync: FsyncMode;
  compact: boolean;
  imports: boolean;
  failSync: boolean;
  /** One operation of any kind fails (open, a short write, fsync, rename, ...) before the power loss. */
  failOp?: boolean;
}

interface Outcome {
  failures: string[];
  inCompaction: boolean;
  /** An import's records were written but not yet confirmed by fdatasync (FSYNC=never: any time after it). */
  inImport: boolean;
  /** An import's write turn was under way: its records being encoded or written in pieces. */
  inPieces: boolean;
  afterFailedSync: boolean;
  /** The operation that failed before the power loss (failOp), if it came. */
  failedOp: string | null;
  cut: number;
}

const entryHash = (id: string, tag: string) => crc32(`${id}=${tag}`);

function setEntry(t: Tracked, id: string, tag: string | undefined): void {
  const old = t.model.get(id);
  if (old !== undefined) t.sum = (t.sum - entryHash(id, old)) >>> 0;
  if (tag === undefined) t.model.delete(id);
  else {
    t.model.set(id, tag);
    t.sum = (t.sum + entryHash(id, tag)) >>> 0;
  }
}

/** The fingerprint of a session as stored: the same sum over the ids the run used. */
function fingerprint(session: Session, t: Tracked): number {
  let sum = 0;
  const ids = [...Array.from({ length: POOL }, (_, i) => `p${i}`), ...Array.from({ length: t.importIds }, (_, i) => `i${i}`)];
  for (const id of ids) {
    const stored = session.index.get(id);
    if (stored) sum = (sum + entryHash(id, `${stored.vector[0]}|${(stored.metadata.value() as { w?: number }).w ?? ''}`)) >>> 0;
  }
  return sum;
}

const vector = (w: number) => [w, 1, -w / 2, 0.5];

async function workload(
  store: SessionStore,
  fs: PowerLossFs,
  tracked: Tracked[],
  scenario: Scenario,
  random: Random,
  flags: { importing: number; pieces: number; unexpected: string[] },
) {
  let counter = 0;
  const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)];

  async function change(t: Tracked) {
    const session = await store.authenticate(t.token);
    const r = random();
    let imported = false;
    await store.writes.inTurn(session, async () => {
      const w = ++counter;
      if (scenario.imports && r < 0.06 && t.importIds === 0) {
        const n = 1001 + Math.floor(random() * 60);
        const plan = session.index.prepareUpsert(
          Array.from({ length: n }, (_, i) => ({ id: `i${i}`, vector: vector(w) })),
          { metric: 'l2' },
        );
        // From its first write until fdatasync confirms it (FSYNC=never: from then on), an import is at the mercy of a power loss.
        flags.importing++;
        flags.pieces++;
        try {
          await store.writes.importPlan(session, plan);
        } catch (err) {
          flags.importing--; // refused: cut back off the log
          throw err;
        } finally {
          flags.pieces--;
        }
        imported = true;
        t.importIds = n;
        for (let i = 0; i < n; i++) setEntry(t, `i${i}`, `${w}|`);
      } else if (r < 0.65 || t.model.size === 0) {
        const ids = [...new Set(Array.from({ length: 1 + Math.floor(random() * 4) }, () => `p${Math.floor(random() * POOL)}`))];
        const meta = random() < 0.5;
        const plan = store.writes.prepareUpsert(
          session,
          ids.map((id) => ({ id, vector: vector(w), metadata: meta ? { w } : undefined })),
          { metric: 'l2' },
        );
        await store.writes.upsert(session, plan);
        for (const id of ids) setEntry(t, id, `${w}|${meta ? w : ''}`);
      } else if (r < 0.8) {
        const id = pick([...t.model.keys()]);
        await store.writes.setMetadata(session, id, { w });
        setEntry(t, id, `${t.model.get(id)!.split('|')[0]}|${w}`);
      } else if (r < 0.97) {
        const ids = [pick([...t.model.keys()]), pick([...t.model.keys()])];
        await store.writes.delete(session, ids);
        for (const id of ids) setEntry(t, id, undefined);
      } else {
        await store.writes.clear(session);
        for (const id of [...t.model.keys()]) setEntry(t, id, undefined);
      }
      t.history.push(t.sum);
    });
    const index = t.history.length - 1;
    await store.durable(session);
    t.acked = Math.max(t.acked, index);
    if (imported && scenario.fsync === 'always') flags.importing--;
    if (scenario.compact && random() < 0.12) store.compactLog(session).catch(() => {});
  }

  async function client(steps: number) {
    for (let i = 0; i < steps && !fs.crashed; i++) {
      try {
        await change(pick(tracked));
      } catch (err) {
        // The documented answer to a disk that fails: 503, the process up.
        if (!(err instanceof ApiError)) throw err;
        if (err.status !== 503 && !fs.crashed) flags.unexpected.push(`${err.status} ${err.code}: ${err.message}`);
      }
      if (random() < 0.3) await new Promise((resolve) => setImmediate(resolve));
    }
  }
  await Promise.all([client(14), client(14), client(10)]);
}

/** The operations a failOp scenario makes fail. */
const FAILING = ['open', 'write', 'write+ftruncate', 'read', 'fsync', 'rename', 'unlink', 'utimes'];

/** Write, lose power at `crashAt` (0: after the workload; at the latest, the first operation after the sessions are created), reopen, compare. */
async function crashPoint(scenario: Scenario, seed: number, crashAt: number): Promise<Outcome & { steps: number; syncs: number }> {
  const random = seeded(seed);
  const config = loadConfig({}, { dataDir: DIR, sessionTtlMs: 864_000_000, fsync: scenario.fsync });
  const fs = new PowerLossFs(DIR, random);
  const store = new SessionStore(config, kernel, Date.now, true, { journalFs: fs, journalWritePieceBytes: PIECE_BYTES });
  const tracked: Tracked[] = [0, 1].map(() => ({
    token: store.create().token,
    model: new Map(),
    sum: 0,
    history: [0],
    acked: 0,
    ackedAtCrash: 0,
    importIds: 0,
  }));
  const flags = { importing: 0, pieces: 0, unexpected: [] as string[] };
  const outcome: Outcome = { failures: [], inCompaction: false, inImport: false, inPieces: false, afterFailedSync: false, failedOp: null, cut: 0 };
  fs.onCrash = () => {
    for (const t of tracked) t.ackedAtCrash = t.acked;
    outcome.inCompaction = [...fs.readdirSync(DIR)].some((name) => name.endsWith('.log.tmp'));
    outcome.inImport = flags.importing > 0;
    outcome.inPieces = flags.pieces > 0;
    outcome.afterFailedSync = fs.failedSyncs > 0;
    outcome.failedOp = fs.failedOp;
  };
  if (scenario.failSync) fs.failSyncAt = 2 + Math.floor(random() * 30);
  fs.crashAt = crashAt;
  if (scenario.failOp) {
    // Each kind as often (a rename or an fsync is rarer than a write); a failed write whose cut-back fails too is one kind.
    const kind = FAILING[Math.floor(random() * FAILING.length)];
    const nth = 1 + Math.floor(random() * (['rename', 'unlink', 'fsync'].includes(kind) ? 3 : 20));
    fs.failFromNow(
      kind === 'write+ftruncate'
        ? new Map([
            ['write', nth],
            ['ftruncate', 1],
          ])
        : new Map([[kind, nth]]),
    );
  }
  await workload(store, fs, tracked, scenario, random, flags);
  outcome.failures.push(...flags.unexpected);
  await store.whenIdle();
  const steps = fs.steps;
  const syncs = fs.syncs;
  fs.crash();

  const reopened = new SessionStore(config, kernel, Date.now, true, { journalFs: new PowerLossFs(DIR, random, fs.image!) });
  for (const [n, t] of tracked.entries()) {
    const least = scenario.fsync === 'always' ? t.ackedAtCrash : 0;
    let found: number;
    try {
      const session = await reopened.authenticate(t.token);
      const sum = fingerprint(session, t);
      found = t.history.lastIndexOf(sum);
      if (found < least) found = -1;
      if (found < 0) {
        const any = t.history.lastIndexOf(sum);
        outcome.failures.push(
          any < 0
            ? `session ${n}: reopened to a state that is no prefix of its history`
            : `session ${n}: reopened at change ${any} of ${t.history.length - 1}, ${t.ackedAtCrash} acknowledged`,
        );
      } else outcome.cut += t.history.length - 1 - found;
    } catch (err) {
      const code = err instanceof ApiError ? err.code : String(err);
      // FSYNC=never: a session created since the last directory writeback may be gone (its empty prefix).
      if (scenario.fsync === 'never' && code === 'INVALID_TOKEN') continue;
      outcome.failures.push(`session ${n}: ${code} on reopen (${t.history.length - 1} changes, ${t.ackedAtCrash} acknowledged)`);
    }
  }
  await reopened.whenIdle();
  return { ...outcome, steps, syncs };
}

/** Run `points` crash points of a scenario; the failures, each with its seed. */
async function run(scenario: Scenario, points: number) {
  // A dry run (power lost after the workload) sizes the range of crash points.
  const dry = await crashPoint(scenario, 1, 0);
  const failures: string[] = [];
  const counts = { inCompaction: 0, inImport: 0, inPieces: 0, afterFailedSync: 0, cut: 0, failedOps: new Map<string, number>() };
  for (let i = 0; i < points; i++) {
    const seed = 1000 + i;
    const crashAt = 1 + Math.floor(seeded(seed * 7919)() * dry.steps * 1.1);
    const outcome = await crashPoint(scenario, seed, crashAt);
    for (const failure of outcome.failures) failures.push(`seed ${seed}, crash at operation ${crashAt}: ${failure}`);
    counts.inCompaction += Number(outcome.inCompaction);
    counts.inImport += Number(outcome.inImport);
    counts.inPieces += Number(outcome.inPieces);
    counts.afterFailedSync += Number(outcome.afterFailedSync);
    if (outcome.failedOp) counts.failedOps.set(outcome.failedOp, (counts.failedOps.get(outcome.failedOp) ?? 0) + 1);
    counts.cut += outcome.cut;
  }
  return { failures, counts };
}

/** `hole`: what the harness found that is not fixed yet (the scenario is then pending). */
const SCENARIOS: { name: string; scenario: Scenario; share: number; hole?: string }[] = [
  {
    name: 'writes',
    scenario: { fsync: 'always', compact: false, imports: false, failSync: false },
    share: 1,
  },
  {
    name: 'writes, compactions and imports',
    scenario: { fsync: 'always', compact: true, imports: true, failSync: false },
    share: 3,
  },
  {
    name: 'writes, compactions, imports and a failed fsync',
    scenario: { fsync: 'always', compact: true, imports: true, failSync: true },
    share: 2,
  },
  {
    name: 'writes, compactions, imports and a failed operation',
    scenario: { fsync: 'always', compact: true, imports: true, failSync: false, failOp: true },
    share: 2,
  },
  {
    name: 'writes',
    scenario: { fsync: 'never', compact: false, imports: false, failSync: false },
    share: 1,
  },
  {
    name: 'writes, compactions and imports',
    scenario: { fsync: 'never', compact: true, imports: true, failSync: false },
    share: 3,
  },
  {
    name: 'writes, compactions, imports and a failed operation',
    scenario: { fsync: 'never', compact: true, imports: true, failSync: false, failOp: true },
    share: 2,
  },
];
const SHARES = SCENARIOS.reduce((total, { share }) => total + share, 0);

describe('power loss at random points (PowerLossFs)', function () {
  this.timeout(0);
  const console_ = { warn: console.warn, error: console.error };
  beforeEach(() => (console.warn = console.error = () => {}));
  afterEach(() => Object.assign(console, console_));

  for (const { name, scenario, share, hole } of SCENARIOS) {
    const points = Math.max(1, Math.round((POINTS * share) / SHARES));
    const promise = scenario.fsync === 'always' ? 'loses no acknowledged change' : 'reopens every session at a prefix of its history';
    (hole && !process.env.POWER_LOSS_HOLES ? it.skip : it)(
      `FSYNC=${scenario.fsync}, ${name}: ${promise} (${points} crash points)${hole ? ` [known hole: ${hole}]` : ''}`,
      async () => {
        const { failures, counts } = await run(scenario, points);
        if (process.env.POWER_LOSS_POINTS)
          Object.assign(console, console_).log(
            `      ${points} crash points: ${counts.inCompaction} in a compaction or rewrite, ${counts.inImport} with an import not yet fsynced (${counts.inPieces} in its write turn), ${counts.afterFailedSync} after a failed fsync${counts.failedOps.size > 0 ? `, after a failed ${[...counts.failedOps].map(([op, n]) => `${op} ${n}`).join(', ')}` : ''}; ${counts.cut} unacknowledged changes cut`,
          );
        expect(failures.slice(0, 10), `${failures.length} of ${points} crash points failed`).to.deep.equal([]);
        // The harness reaches what it claims to: crash points inside an import's turn, written in pieces.
        if (scenario.imports && points >= 50) expect(counts.inPieces, "crash points in an import's write turn").to.be.greaterThan(0);
      },
    );
  }
});
