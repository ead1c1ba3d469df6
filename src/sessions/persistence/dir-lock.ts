// One process per DATA_DIR. Appends are positional writes at offsets kept in
// memory and scan() deletes compaction files, so two processes on one
// directory would interleave records and delete each other's work.
// A lock file created with O_EXCL, holding "pid host boot-id": no native code (Node has no flock), and a stale one is told by its pid.
// A lock is stale when its host is this one and either its boot id is not
// this boot's (a reboot: its pid may now be another program's) or no process
// has its pid. A lock of another host (a shared volume) is never judged stale:
// the operator removes it. An empty or unreadable lock younger than
// LOCK_WRITE_MS is one being written: in use.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../config.js';
import { readExactSync, writeAllSync, type JournalFs } from './journal-fs.js';

export const LOCK_NAME = 'tempvec.lock';
/** An empty lock file this recent is being written by the process that created it. */
const LOCK_WRITE_MS = 5000;

interface Holder {
  pid: number;
  host: string;
  boot: string;
}

/** The locks this process took, released when it exits (a SIGKILL leaves them stale). */
const held = new Map<string, () => void>();

/** Take DATA_DIR's lock (or keep it: this process holds it already); ConfigError when another process holds it. */
export function lockDir(io: JournalFs, dir: string, me: Holder = thisProcess()): void {
  const path = join(dir, LOCK_NAME);
  for (let attempt = 0; attempt < 3; attempt++) {
    if (create(io, path, me)) {
      if (held.size === 0)
        process.once('exit', () => {
          for (const release of held.values()) release();
        });
      held.set(path, () => release(io, path, me));
      return;
    }
    const text = readQuietly(io, path);
    if (text === null) continue; // removed meanwhile: try again
    const holder = parse(text);
    if (holder && same(holder, me)) return; // this process (a store made again in one process, as tests do)
    if (!isStale(io, path, holder, me)) throw inUse(dir, path, holder);
    // Move the stale lock aside, then check that what moved is what was judged stale: another
    // process breaking the same lock at the same moment may have taken it in between.
    const aside = `${path}.stale-${me.pid}`;
    try {
      io.renameSync(path, aside);
    } catch {
      continue;
    }
    const moved = readQuietly(io, aside);
    if (moved !== text) {
      io.renameSync(aside, path); // a live holder's: put it back
      throw inUse(dir, path, moved === null ? null : parse(moved));
    }
    io.rmSync(aside);
  }
  throw inUse(dir, path, null);
}

function thisProcess(): Holder {
  let boot = '';
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    // not Linux: a lock then outlives a reboot only as long as its pid is free
  }
  return { pid: process.pid, host: hostname(), boot };
}

function format(holder: Holder): string {
  return `${holder.pid} ${holder.host} ${holder.boot}\n`;
}

function parse(text: string): Holder | null {
  const match = /^(\d+) (\S+) (\S*)\n$/.exec(text);
  return match ? { pid: Number(match[1]), host: match[2], boot: match[3] } : null;
}

function same(a: Holder, b: Holder): boolean {
  return a.pid === b.pid && a.host === b.host && a.boot === b.boot;
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

function isStale(io: JournalFs, path: string, holder: Holder | null, me: Holder): boolean {
  if (!holder) {
    try {
      return Date.now() - io.statSync(path).mtimeMs > LOCK_WRITE_MS;
    } catch {
      return false;
    }
  }
  if (holder.host !== me.host) return false;
  if (holder.boot !== me.boot && holder.boot !== '' && me.boot !== '') return true;
  return !isAlive(holder.pid);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM'; // alive, another user's
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
      // a lock left behind is stale once this process is gone
    }
  }
}

function inUse(dir: string, path: string, holder: Holder | null): ConfigError {
  const who = holder ? `process ${holder.pid} on host ${holder.host}` : 'another process';
  return new ConfigError(`DATA_DIR "${dir}" is in use by ${who} (lock file ${path}); one process per DATA_DIR. If that process is gone, delete the lock file`);
}
