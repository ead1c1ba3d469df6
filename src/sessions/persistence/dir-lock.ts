// One process per DATA_DIR. Appends are positional writes at offsets kept in
// memory and scan() deletes compaction files, so two processes on one
// directory would interleave records and delete each other's work.
// A lock file created with O_EXCL, holding "pid host boot-id start-time", whose
// mtime the holder refreshes every LOCK_STALE_MS / 3 (its heartbeat), as
// proper-lockfile does; written here because the judgement of a lock on this
// host goes by its process (at once, not after the stale interval), the lock
// is taken synchronously where the journal is made, and through its JournalFs.
// A lock is stale when:
// - it names this host and another boot (its pid may be another program's now),
//   or a process that is gone: no /proc/PID, a zombie (state Z: killed, not yet
//   reaped, and `kill(pid, 0)` still succeeds on it), or a pid reused (another
//   start time);
// - otherwise (another host: a new container on the same volume; an empty or
//   unreadable lock; this host and this very pid, so another pid namespace)
//   when its heartbeat is older than LOCK_STALE_MS.
// Nothing is deleted by hand: a stale lock is moved aside and taken.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ConfigError, lockHeartbeatMs } from '../../config.js';
import { nodeFs, readExactSync, writeAllSync, type JournalFs } from './journal-fs.js';

export const LOCK_NAME = 'tempvec.lock';
/** LOCK_STALE_MS's default, for journals made without a configuration (tests). */
const DEFAULT_STALE_MS = 10_000;

export interface Holder {
  pid: number;
  host: string;
  boot: string;
  /** Start time in clock ticks since boot (/proc/PID/stat field 22); '' where unknown (no /proc, a lock of an older version). */
  start: string;
}

/** What a lock found in the directory comes to: taken over, or refused. */
type Verdict = 'stale' | 'live process' | 'fresh heartbeat';

interface Held {
  io: JournalFs;
  me: Holder;
  timer: NodeJS.Timeout;
}

/** The locks this process holds, released when it exits (a SIGKILL leaves them to go stale). */
const held = new Map<string, Held>();
/** Told when another process took a lock this one held (it judged this one stale: a stalled event loop). */
let onLost = (message: string) => console.error(`tempvec: ${message}`);

/** Set what happens when this process finds its DATA_DIR lock taken by another (the server exits); returns the handler it replaces. */
export function onDirLockLost(handler: (message: string) => void): (message: string) => void {
  const before = onLost;
  onLost = handler;
  return before;
}

/** Take DATA_DIR's lock (or keep it: this process holds it already); ConfigError when another process holds it. */
export function lockDir(io: JournalFs, dir: string, staleMs = DEFAULT_STALE_MS, me: Holder = thisProcess()): void {
  const path = join(dir, LOCK_NAME);
  for (let attempt = 0; attempt < 3; attempt++) {
    if (create(io, path, me)) {
      hold(io, path, me, staleMs);
      return;
    }
    const found = look(io, path);
    if (found === null) continue; // removed meanwhile: try again
    const holder = parse(found.text);
    if (holder && same(holder, me)) return; // this process (a store made again in one process, as tests do)
    const verdict = judge(holder, Date.now() - found.mtimeMs, me, staleMs);
    if (verdict !== 'stale') throw inUse(dir, path, holder, verdict, staleMs);
    // Move the stale lock aside, then check that what moved is what was judged stale: another
    // process breaking the same lock at the same moment may have taken it in between.
    const aside = `${path}.stale-${me.pid}`;
    try {
      io.renameSync(path, aside);
    } catch {
      continue;
    }
    const moved = readQuietly(io, aside);
    if (moved !== found.text) {
      io.renameSync(aside, path); // a live holder's: put it back
      throw inUse(dir, path, moved === null ? null : parse(moved), 'live process', staleMs);
    }
    io.rmSync(aside);
  }
  throw inUse(dir, path, null, 'live process', staleMs);
}

/**
 * Before lockDir at start-up: while DATA_DIR's lock is one judged by its heartbeat and that
 * heartbeat is fresh but not moving (the holder may have just died: a SIGKILLed container), wait,
 * up to `staleMs`, for it to go stale (lockDir then takes it) or to move (lockDir then refuses).
 */
export async function awaitStaleLock(dir: string, staleMs: number, log: (line: string) => void, me: Holder = thisProcess()): Promise<void> {
  const path = join(dir, LOCK_NAME);
  const first = look(nodeFs, path);
  if (!first) return;
  const holder = parse(first.text);
  const age = () => Date.now() - first.mtimeMs;
  if ((holder && same(holder, me)) || judge(holder, age(), me, staleMs) !== 'fresh heartbeat') return;
  log(`tempvec: DATA_DIR's lock names ${who(holder)}, heartbeat ${Math.round(age())} ms ago: waiting up to ${staleMs} ms for it to go stale`);
  const pollMs = Math.min(250, lockHeartbeatMs(staleMs) / 4);
  while (age() <= staleMs) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    const now = look(nodeFs, path);
    if (!now || now.text !== first.text || now.mtimeMs !== first.mtimeMs) return; // gone, taken or beating
  }
}

/** This process as a lock names it. */
export function thisProcess(): Holder {
  let boot = '';
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    // not Linux: a lock then outlives a reboot only as long as its pid is free
  }
  return { pid: process.pid, host: hostname(), boot, start: procStat(process.pid)?.start ?? '' };
}

/** What a lock comes to: its holder's process decides on this host, its heartbeat elsewhere. */
function judge(holder: Holder | null, ageMs: number, me: Holder, staleMs: number): Verdict {
  if (holder && holder.host === me.host && holder.pid !== me.pid) {
    if (holder.boot !== me.boot && holder.boot !== '' && me.boot !== '') return 'stale';
    return isAlive(holder) ? 'live process' : 'stale';
  }
  return ageMs > staleMs ? 'stale' : 'fresh heartbeat';
}

/** Whether the lock's process runs: not gone, not a zombie, not its pid reused by a later process. */
function isAlive(holder: Holder): boolean {
  const stat = procStat(holder.pid);
  if (stat === undefined) return killable(holder.pid);
  if (stat === null || stat.state === 'Z' || stat.state === 'X') return false;
  return holder.start === '' || holder.start === stat.start;
}

const HAS_PROC = existsSync('/proc/self/stat');

/** /proc/PID/stat's state and start time; null: no such process; undefined: no /proc here. */
export function procStat(pid: number): { state: string; start: string } | null | undefined {
  if (!HAS_PROC) return undefined;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0], start: fields[19] ?? '' };
}

function killable(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM'; // alive, another user's
  }
}

function format(holder: Holder): string {
  return `${holder.pid} ${holder.host} ${holder.boot} ${holder.start}\n`;
}

function parse(text: string): Holder | null {
  const match = /^(\d+) (\S+) (\S*)(?: (\S*))?\n$/.exec(text);
  return match ? { pid: Number(match[1]), host: match[2], boot: match[3], start: match[4] ?? '' } : null;
}

function same(a: Holder, b: Holder): boolean {
  return a.pid === b.pid && a.host === b.host && a.boot === b.boot && a.start === b.start;
}

function create(io: JournalFs, path: string, me: Holder): boolean {
  let fd: number;
  try {
    fd = io.openSync(path, 'wx', 0o600);
  } catch (err) {
    if ((err as { code?: string }).code === 'EEXIST') return false;
    throw new ConfigError(`cannot create the lock file "${path}" (${(err as { code?: string }).code ?? (err as Error).message})`);
  }
  try {
    writeAllSync(io, fd, Buffer.from(format(me)), 0);
    io.fsyncSync(fd);
  } finally {
    io.closeSync(fd);
  }
  return true;
}

/** Keep the lock: its heartbeat, and its release when this process exits. */
function hold(io: JournalFs, path: string, me: Holder, staleMs: number): void {
  if (held.size === 0)
    process.once('exit', () => {
      for (const [heldPath, lock] of held) release(lock.io, heldPath, lock.me);
    });
  const timer = setInterval(() => beat(io, path, me, staleMs), lockHeartbeatMs(staleMs));
  timer.unref(); // the lock never keeps a process alive: it goes stale once the process is gone
  held.set(path, { io, me, timer });
}

/** One heartbeat: refresh the mtime while the lock is this process's; a lock taken by another is lost. */
function beat(io: JournalFs, path: string, me: Holder, staleMs: number): void {
  const text = readQuietly(io, path);
  if (text === format(me)) {
    const now = Date.now() / 1000;
    try {
      io.utimesSync(path, now, now);
    } catch {
      // tried again at the next beat; two missed in a row still leave the lock fresh
    }
    return;
  }
  stop(path);
  if (text === null && !dirExists(io, path)) return; // DATA_DIR removed (tests): nothing left to guard
  if (text === null && createQuietly(io, path, me)) {
    hold(io, path, me, staleMs); // deleted by hand: made again, nobody had taken it
    return;
  }
  onLost(`the DATA_DIR lock ${path} was taken by ${who(text === null ? null : parse(text))}, which judged this process gone`);
}

function createQuietly(io: JournalFs, path: string, me: Holder): boolean {
  try {
    return create(io, path, me);
  } catch {
    return false;
  }
}

function stop(path: string): void {
  clearInterval(held.get(path)?.timer);
  held.delete(path);
}

function dirExists(io: JournalFs, path: string): boolean {
  try {
    io.statSync(join(path, '..'));
    return true;
  } catch {
    return false;
  }
}

function look(io: JournalFs, path: string): { text: string; mtimeMs: number } | null {
  try {
    const { mtimeMs } = io.statSync(path);
    const text = readQuietly(io, path);
    return text === null ? null : { text, mtimeMs };
  } catch {
    return null;
  }
}

function readQuietly(io: JournalFs, path: string): string | null {
  try {
    const fd = io.openSync(path, 'r');
    try {
      const size = io.statSync(path).size;
      return readExactSync(io, fd, Math.min(size, 4096), 0).toString('utf8');
    } finally {
      io.closeSync(fd);
    }
  } catch {
    return null;
  }
}

function release(io: JournalFs, path: string, me: Holder): void {
  const text = readQuietly(io, path);
  if (text !== null && text === format(me)) {
    try {
      io.rmSync(path);
    } catch {
      // a lock left behind goes stale once this process is gone
    }
  }
}

function who(holder: Holder | null): string {
  return holder ? `process ${holder.pid} on host ${holder.host}` : 'another process';
}

function inUse(dir: string, path: string, holder: Holder | null, verdict: Verdict, staleMs: number): ConfigError {
  const why = verdict === 'live process' ? 'which is running' : `whose heartbeat is younger than LOCK_STALE_MS (${staleMs} ms)`;
  return new ConfigError(
    `DATA_DIR "${dir}" is in use by ${who(holder)}, ${why} (lock file ${path}); one process per DATA_DIR. A lock whose process is gone is taken over without deleting it: at once on this host, after LOCK_STALE_MS from another`,
  );
}
