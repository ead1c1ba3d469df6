// Rewriting a session's log as the session is in memory (snapshot.ts):
// compaction (in the background, as the log grows, the changes appended
// meanwhile copied after the snapshot) and the rewrite after a failed fsync
// (writes refused meanwhile). Both follow the same protocol as NeDB's
// crashSafeWriteFile: write a temporary file, fsync it, rename it over the
// log, fsync the directory. Any failure before the rename leaves the old log
// as it was.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { crc32 } from 'node:zlib';
import { PERSISTENCE_JOB_BUFFER_BYTES, type FsyncMode } from '../../config.js';
import type { Reservation } from '../../limits/memory-budget.js';
import { closeQuietly, describe, readExact, readExactSync, syncDir, writeAll, writeAllSync, type JournalFs } from './journal-fs.js';
import type { LogFile } from './log-file.js';
import { CHUNK_BYTES } from './log-reader.js';
import { Slices } from '../../limits/slices.js';
import { snapshotRecords, type SnapshotState } from './snapshot.js';

/** Changes appended while a compaction ran are copied over without pausing once this few bytes are left. */
const FINAL_COPY_BYTES = 256 * 1024;
/** FSYNC=always: rounds of copying and fsyncing that tail while the event loop runs, before the last (synchronous) piece. */
const TAIL_SYNC_ROUNDS = 4;
/** Rounds of copying that tail before the fsync and read-back of the new file. */
const EARLY_ROUNDS = 4;
/** Rounds of copying that tail after which a compaction gives up (tried again later): the log grows faster than it copies. */
const CATCH_UP_ROUNDS_MAX = 64;
/** A compaction gives up (tried again later) once its export keeps this many bytes of rows changed before it reached them (a clear of a large session meanwhile). */
export const COPIES_MAX_BYTES = 16 * 1024 * 1024;

export interface CompactionEnv {
  io: JournalFs;
  dir: string;
  fsync: FsyncMode;
  sliceMs: number | undefined;
  /** Counts the job's buffers in the memory budget. */
  hold: (bytes: number) => Reservation;
  /** COPIES_MAX_BYTES (tests lower it). */
  copiesMaxBytes: number;
  /** Bytes the job's temporary file grew by (negative once it is renamed or deleted): DATA_DIR's count. */
  temp: (bytes: number) => void;
}

/** Buffers a compaction holds besides its export's copies: a piece of the tail being copied, and one read back (2 x CHUNK_BYTES). */
const BUFFER_BYTES = PERSISTENCE_JOB_BUFFER_BYTES;

/** What a snapshot of the file's session records besides its rows, now. */
function stateOf(file: LogFile): SnapshotState {
  const { session } = file;
  return { sessionId: session.id, createdAt: session.createdAt, updatedAt: session.updatedAt, lastAccessedAt: session.lastAccessedAt, sequence: file.sequence };
}

/**
 * Compact a log, in slices that give the event loop back: on a later turn
 * (so the change whose append made it due is applied), open an export of
 * the index and note the log's size at the same moment; write the snapshot
 * to a temporary file (every write checked), fsync it and read it back
 * against the checksum of what was written; copy over what was appended
 * since that moment (FSYNC=always: fsynced again, since an fdatasync of the
 * old log may have acknowledged it), rename the file over the log, fsync
 * the directory.
 */
export async function compact(file: LogFile, env: CompactionEnv): Promise<void> {
  const { io } = env;
  await nextTurn();
  if (file.closed || file.broken) return;
  const slices = new Slices(env.sliceMs);
  const generation = file.generation;
  const source = await io.open(file.path, 'r');
  const temp = `${file.path}.tmp`;
  let target: number | undefined;
  const held = env.hold(BUFFER_BYTES);
  let counted = 0;
  const count = (to: number) => {
    env.temp(to - counted);
    counted = to;
  };
  try {
    target = await io.open(temp, 'w+', 0o600);
    // An add being applied in slices is in the log already: the export opens once all of it is in memory.
    await file.session.index.settled();
    // The snapshot's moment: the log up to `snapshot` bytes holds what the export holds.
    const snapshot = file.size;
    let copies = 0;
    let tooMany = false;
    const rows = file.session.index.openExport((bytes) => {
      copies += bytes;
      held.grow(bytes);
      if (copies > env.copiesMaxBytes) tooMany = true;
    });
    let size = 0;
    let checksum = 0;
    for (const bytes of snapshotRecords(stateOf(file), rows)) {
      if (tooMany) throw new Error('the session changed too much under the compaction (its export kept too many copies)');
      await writeAll(io, target, bytes, size);
      checksum = crc32(bytes, checksum);
      size += bytes.length;
      count(size);
      await slices.pause();
    }
    // Changes appended meanwhile: copied in rounds while the event loop runs, each round what is
    // behind at its start (so it ends while appends keep coming); FSYNC=always (`sync`): fsynced too,
    // since an fdatasync of the old log may have acknowledged them.
    let copied = snapshot;
    let synced = 0;
    const copyRound = async (sync: boolean) => {
      const end = file.size;
      while (copied < end) {
        const piece = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, end - copied));
        await readExact(io, source, piece, copied);
        await writeAll(io, target!, piece, size);
        checksum = crc32(piece, checksum);
        size += piece.length;
        count(size);
        copied += piece.length;
        await slices.pause();
      }
      if (sync) {
        await io.fsync(target!);
        synced = size;
      }
    };
    for (let round = 0; round < EARLY_ROUNDS && file.size - copied > FINAL_COPY_BYTES; round++) await copyRound(false);
    await io.fsync(target);
    synced = size;
    await verify(io, target, size, checksum, slices);
    const always = env.fsync === 'always';
    // The end: a change written in pieces waits for it (such changes would outrun the copy), and the
    // one under way ends first (its last pieces must not land in the old file after the rename).
    const resume = file.holdAppendsInPieces();
    try {
      // At most FINAL_COPY_BYTES left for the last, synchronous piece (FSYNC=always: copied and
      // fsynced to the end a few times first, so that piece is small or nothing).
      for (let round = 0; file.appending || file.size - copied > FINAL_COPY_BYTES || (always && round < TAIL_SYNC_ROUNDS && file.size > copied); round++) {
        if (round >= CATCH_UP_ROUNDS_MAX) throw new Error('the log kept growing faster than the compaction copied it');
        await file.appending;
        await copyRound(always);
      }
      if (file.closed) throw new Error('the session closed during compaction');
      if (file.broken || file.generation !== generation) throw new Error('an fsync failed during compaction: the log is rewritten from memory instead');
      // From here on synchronous: no append can come in between.
      const rest = file.size - copied;
      if (rest > 0) {
        const piece = readExactSync(io, source, rest, copied);
        writeAllSync(io, target, piece, size);
        if (!readExactSync(io, target, rest, size).equals(piece)) throw new Error('the copied tail reads back different');
        size += rest;
      }
      // FSYNC=always: the last few changes, which may be acknowledged already, synced before the rename (on the event loop, but small).
      if (always && size > synced) io.fsyncSync(target);
      io.closeSync(target);
      target = undefined;
      io.renameSync(temp, file.path);
      file.replaced(size, rest);
    } finally {
      resume();
    }
    // The rename is durable once the directory is fsynced; fdatasyncs of the new file wait for it.
    const renamed = syncDir(io, env.dir);
    file.renameSyncing(env.fsync === 'always' ? renamed : renamed.catch(() => {}));
    await renamed.catch((err) => console.error(`tempvec: could not fsync ${env.dir} after compacting a log: ${describe(err)}`));
  } finally {
    // Renamed over the log (which the log's size now counts) or deleted by the caller.
    count(0);
    held.release();
    if (target !== undefined) closeQuietly(io, target);
    await io.close(source).catch(() => {});
  }
}

/**
 * After a failed fsync: the session as it is in memory to a temporary file,
 * fsynced, renamed over the log, the directory fsynced; then every change in
 * memory is on stable storage, and the log takes appends again. Writes are
 * refused meanwhile (the log is broken), so memory does not change under it
 * (a change being written in pieces is refused too, and waited for).
 * The caller waits for a compaction under way first (it writes the same
 * temporary file, and gives up once it sees the log broken).
 */
export async function rewriteFromMemory(file: LogFile, env: CompactionEnv): Promise<void> {
  const { io } = env;
  // A change being written in pieces fails once it sees the log broken; memory is read after it has.
  while (file.appending) await file.appending;
  const slices = new Slices(env.sliceMs);
  const temp = `${file.path}.tmp`;
  const target = await io.open(temp, 'w', 0o600);
  // One logged before the failure may still be applied in slices: memory is read once it is all in.
  await file.session.index.settled();
  const held = env.hold(BUFFER_BYTES);
  let size = 0;
  try {
    for (const bytes of snapshotRecords(stateOf(file), file.session.index.openExport())) {
      await writeAll(io, target, bytes, size);
      size += bytes.length;
      env.temp(bytes.length);
      if (file.closed) throw new Error('the session closed during the rewrite');
      await slices.pause();
    }
    await io.fsync(target);
  } finally {
    // Renamed over the log below (which the log's size then counts), or deleted by the caller.
    env.temp(-size);
    held.release();
    await io.close(target).catch(() => {});
  }
  if (file.closed) throw new Error('the session closed during the rewrite');
  io.renameSync(temp, file.path);
  file.replaced(size, 0);
  file.renameSyncing(null);
  await syncDir(io, env.dir);
  file.rewritten();
}

/** Read a written file back: exactly `size` bytes, with the checksum of what was written. */
async function verify(io: JournalFs, fd: number, size: number, checksum: number, slices: Slices): Promise<void> {
  let seen = 0;
  const piece = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size));
  for (let at = 0; at < size; at += piece.length) {
    const part = piece.subarray(0, Math.min(piece.length, size - at));
    await readExact(io, fd, part, at);
    seen = crc32(part, seen);
    await slices.pause();
  }
  const extra = await io.read(fd, Buffer.allocUnsafe(1), 0, 1, size);
  if (seen !== checksum || extra !== 0) throw new Error('the compacted log reads back different from what was written');
}
