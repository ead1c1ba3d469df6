// A session's log reopened after a restart (SessionJournal.reopen): replayed
// (replay.ts), a torn tail cut off, a log that cannot be replayed set aside,
// and what that came to decided once, as a ReopenOutcome.
import { isWasmAllocationFailure } from '../../limits/wasm-memories.js';
import type { Reservation } from '../../limits/memory-budget.js';
import { Slices } from '../../limits/slices.js';
import type { Session } from '../session.js';
import { closeQuietly, type JournalFs } from './journal-fs.js';
import type { LogDir } from './log-dir.js';
import { CHUNK_BYTES, LogReader } from './log-reader.js';
import { CorruptLogError, FormatError } from './records-v2.js';
import { replay } from './replay.js';

/** What a reopen found wrong, for the operator's log. */
export interface RestoreReport {
  tornTail: string | null;
  /** Whole records after the damage, cut with it. */
  cutRecords: number;
}

/**
 * What a reopen came to: the session rebuilt (`reopened`); a log with no whole
 * record, deleted (`empty`); a log left as it is for a later try, for want of
 * memory (`no-memory`) or for an I/O error (`unreadable`); or a log that
 * cannot be replayed, renamed aside (`set-aside`: `corrupt`, a damaged record
 * that was on stable storage; `other-format`, not version 2 of this format).
 */
export type ReopenOutcome =
  | { t: 'reopened'; session: Session; report: RestoreReport }
  | { t: 'empty' }
  | { t: 'no-memory' | 'unreadable'; error: Error }
  | { t: 'set-aside'; why: 'corrupt' | 'other-format'; error: Error };

/** What reopens found, since the start (/metrics). */
export interface JournalCounts {
  /** Reopens that cut a torn or damaged tail off a log. */
  tailsCut: number;
  /** Whole records found after such damage and cut with it (FSYNC=never: changes lost to a power loss). */
  recordsCut: number;
  /** Logs set aside (renamed .corrupt): a record that was on stable storage is damaged. */
  setAside: number;
  /** Logs set aside (renamed .other-format): not version 2 of this format (another version, or not a tempvec log). */
  otherFormat: number;
}

/** What a reopen uses of the journal. */
export interface ReopenEnv {
  io: JournalFs;
  files: LogDir;
  sliceMs: number | undefined;
  /** Counts the reader's buffers in the memory budget. */
  hold: (bytes: number) => Reservation;
  counts: JournalCounts;
  /** The reopened session's log, `size` bytes of whole records up to `sequence`, taken into the journal. */
  track(session: Session, size: number, sequence: number): void;
}

export async function replayLog(env: ReopenEnv, tokenHash: string, make: (sessionId: string, createdAt: number) => Session): Promise<ReopenOutcome> {
  const { io, files, counts } = env;
  const path = files.pathOf(tokenHash);
  const slices = new Slices(env.sliceMs);
  const held = env.hold(0);
  let fd: number;
  try {
    fd = await io.open(path, 'r');
  } catch (err) {
    held.release();
    return { t: 'unreadable', error: asError(err) };
  }
  let replayed: Awaited<ReturnType<typeof replay>>;
  try {
    const reader = new LogReader((out, position) => io.read(fd, out, 0, out.length, position), io.statSync(path).size, CHUNK_BYTES, held);
    replayed = await replay(reader, make, slices, held);
  } catch (err) {
    return unreplayable(env, tokenHash, err);
  } finally {
    held.release();
    await io.close(fd).catch(() => {});
  }
  const { session, end, sequence } = replayed;
  try {
    if (!session) io.rmSync(path);
    else if (end.tornTail) cut(io, path, end.validBytes);
  } catch (err) {
    // The session is not reopened on a log that could not be repaired: it stays on disk for a later try.
    session?.index.reset();
    return { t: 'unreadable', error: asError(err) };
  }
  if (!session) {
    files.countLog(tokenHash, undefined);
    return { t: 'empty' };
  }
  if (end.tornTail) {
    counts.tailsCut++;
    counts.recordsCut += end.cutRecords;
  }
  env.track(session, end.validBytes, sequence);
  return { t: 'reopened', session, report: { tornTail: end.tornTail, cutRecords: end.cutRecords } };
}

/** A replay that failed: no memory for it now, an I/O error (both leave the log as it is), or a log set aside. */
function unreplayable(env: ReopenEnv, tokenHash: string, err: unknown): ReopenOutcome {
  const { files, counts } = env;
  const error = asError(err);
  // No memory for it now: the log is sound and stays as it is for a later reopen.
  if (isWasmAllocationFailure(err)) return { t: 'no-memory', error };
  if (err instanceof FormatError) {
    files.setAside(tokenHash, 'other-format');
    counts.otherFormat++;
    return { t: 'set-aside', why: 'other-format', error };
  }
  if (err instanceof CorruptLogError || !isIoError(err)) {
    files.setAside(tokenHash, 'corrupt');
    counts.setAside++;
    return { t: 'set-aside', why: 'corrupt', error: err instanceof CorruptLogError ? err : new CorruptLogError(`cannot replay: ${error.message}`) };
  }
  return { t: 'unreadable', error };
}

/**
 * Cut a torn tail off (a failure throws).
 * Fsynced in both modes before the log takes a record: a lost truncate would bring back the records behind
 * a new one that filled the cut exactly (their sequence numbers run on), after a second power loss.
 */
function cut(io: JournalFs, path: string, size: number): void {
  const fd = io.openSync(path, 'r+');
  try {
    io.ftruncateSync(fd, size);
    io.fsyncSync(fd);
  } finally {
    closeQuietly(io, fd);
  }
}

/** About the bytes a compaction would write for `session` (its rows as float32, ids, metadata and texts as stored). */
export function liveBytes(session: Session): number {
  const { index } = session;
  const dimensions = index.getConfig().dimensions ?? 0;
  const stats = index.stats();
  return index.size * (dimensions * 4 + ROW_OVERHEAD_BYTES) + stats.heapBytes + stats.metadata.jsonBytes + stats.text.jsonBytes;
}

/** A row's bytes in a snapshot besides its vector, id, metadata and text (lengths, offsets), about. */
const ROW_OVERHEAD_BYTES = 16;

/** An I/O error (the log is unreadable for now and stays on disk), not a log that cannot be replayed. */
function isIoError(err: unknown): boolean {
  const { code } = err as { code?: unknown };
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code);
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
