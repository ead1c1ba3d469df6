// The file operations the session journal uses, in one object, so tests can
// inject a full disk, a short write or a failed fsync where a tmpfs is not at
// hand. Synchronous calls sit on the write path (an append is on disk, or
// undone, before the change is applied); the asynchronous ones do the long
// jobs (compaction, reopening, group commit) without holding the event loop.
import * as fs from 'node:fs';
import { promisify } from 'node:util';

export interface JournalFs {
  openSync(path: string, flags: string, mode?: number): number;
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  ftruncateSync(fd: number, length: number): void;
  fsyncSync(fd: number): void;
  closeSync(fd: number): void;
  renameSync(from: string, to: string): void;
  rmSync(path: string): void;
  utimesSync(path: string, atime: number, mtime: number): void;
  mkdirSync(path: string, mode: number): void;
  readdirSync(path: string): string[];
  statSync(path: string): { mtimeMs: number; size: number };
  open(path: string, flags: string, mode?: number): Promise<number>;
  write(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  read(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  fdatasync(fd: number): Promise<void>;
  fsync(fd: number): Promise<void>;
  close(fd: number): Promise<void>;
}

const read = promisify(fs.read);
const write = promisify(fs.write);

export const nodeFs: JournalFs = {
  openSync: (path, flags, mode) => fs.openSync(path, flags, mode),
  writeSync: (fd, buffer, offset, length, position) => fs.writeSync(fd, buffer, offset, length, position),
  readSync: (fd, buffer, offset, length, position) => fs.readSync(fd, buffer, offset, length, position),
  ftruncateSync: (fd, length) => fs.ftruncateSync(fd, length),
  fsyncSync: (fd) => fs.fsyncSync(fd),
  closeSync: (fd) => fs.closeSync(fd),
  renameSync: (from, to) => fs.renameSync(from, to),
  rmSync: (path) => fs.rmSync(path, { force: true }),
  utimesSync: (path, atime, mtime) => fs.utimesSync(path, atime, mtime),
  mkdirSync: (path, mode) => void fs.mkdirSync(path, { recursive: true, mode }),
  readdirSync: (path) => fs.readdirSync(path),
  statSync: (path) => fs.statSync(path),
  open: promisify(fs.open) as JournalFs['open'],
  write: async (fd, buffer, offset, length, position) => (await write(fd, buffer, offset, length, position)).bytesWritten,
  read: async (fd, buffer, offset, length, position) => (await read(fd, buffer, offset, length, position)).bytesRead,
  fdatasync: promisify(fs.fdatasync),
  fsync: promisify(fs.fsync),
  close: promisify(fs.close),
};

/** Write all of `bytes` at `position`: a short write continues where it stopped; no progress is an error. */
export function writeAllSync(io: JournalFs, fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.length; ) {
    const n = io.writeSync(fd, bytes, done, bytes.length - done, position + done);
    if (!(n > 0)) throw new Error(`write made no progress at byte ${position + done}`);
    done += n;
  }
}

export async function writeAll(io: JournalFs, fd: number, bytes: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < bytes.length; ) {
    const n = await io.write(fd, bytes, done, bytes.length - done, position + done);
    if (!(n > 0)) throw new Error(`write made no progress at byte ${position + done}`);
    done += n;
  }
}

/** Read exactly `length` bytes at `position` (a file shorter than that is an error). */
export function readExactSync(io: JournalFs, fd: number, length: number, position: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  for (let done = 0; done < length; ) {
    const n = io.readSync(fd, out, done, length - done, position + done);
    if (!(n > 0)) throw new Error(`the file ended at byte ${position + done}, ${length - done} bytes early`);
    done += n;
  }
  return out;
}

export async function readExact(io: JournalFs, fd: number, out: Buffer, position: number): Promise<void> {
  for (let done = 0; done < out.length; ) {
    const n = await io.read(fd, out, done, out.length - done, position + done);
    if (!(n > 0)) throw new Error(`the file ended at byte ${position + done}, ${out.length - done} bytes early`);
    done += n;
  }
}

export function closeQuietly(io: JournalFs, fd: number): void {
  quietly(() => io.closeSync(fd));
}

export function quietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // best-effort: the caller has already decided what a failure means
  }
}

/** An error's code, or its message, for a log line. */
export function describe(err: unknown): string {
  const { code, message } = err as { code?: string; message?: string };
  return code ?? message ?? String(err);
}

/** An fsync that could not even be tried (the file or directory could not be opened: EMFILE): not a failed fsync, nothing was lost. */
export class SyncNotTriedError extends Error {}

/** fsync a directory, so the renames and creations in it are durable (SyncNotTriedError when it cannot be opened). */
export async function syncDir(io: JournalFs, dir: string): Promise<void> {
  let fd: number;
  try {
    fd = await io.open(dir, 'r');
  } catch (err) {
    throw new SyncNotTriedError(`the directory could not be opened to fsync it (${describe(err)})`);
  }
  try {
    await io.fsync(fd);
  } finally {
    await io.close(fd).catch(() => {});
  }
}

export function syncDirSync(io: JournalFs, dir: string): void {
  const fd = io.openSync(dir, 'r');
  try {
    io.fsyncSync(fd);
  } finally {
    closeQuietly(io, fd);
  }
}
