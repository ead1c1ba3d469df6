// A file system in memory behind the journal's JournalFs seam that simulates
// a power loss, after SQLite's crash-test VFS: it keeps what was fsynced
// apart from what was only written, and at the crash point each page written
// since the last fsync is written, dropped, torn (a prefix written) or has its
// bytes not yet fsynced zero-filled, independently
// (so pages reach the disk out of order), the file's size lands anywhere
// between its synced and its written size, and of the directory changes
// (create, rename, delete) since the last directory fsync a random prefix
// survives. A truncate is a change of the file's size, like a write's: until
// an fsync it may be lost, and then the bytes past the cut come back as the
// disk held them; a page written after it is written back up to the end of
// the file only (as a file system that writes back byte ranges does: LazyFS),
// so new records that fill a cut region exactly can be followed by the old
// ones behind it. A failed fsync behaves as Linux's does ("fsyncgate"): some dirty
// pages are never written, yet they are marked clean, so reads (the page
// cache) go on returning the data that the disk does not hold.
import type { JournalFs } from '../../src/sessions/persistence/journal-fs.js';

/** The unit the disk writes: a sector, so a record of a few hundred bytes spans several. */
export const PAGE_BYTES = 512;

export type Random = () => number;

class Inode {
  data: Buffer = Buffer.alloc(0);
  size = 0;
  /** What the disk holds for sure (as of the last fsync). */
  durable: Buffer = Buffer.alloc(0);
  durableSize = 0;
  /** Pages written since the last fsync. */
  dirty = new Set<number>();
  mtimeMs = Date.now();

  constructor(contents?: Buffer) {
    if (contents) {
      this.data = Buffer.from(contents);
      this.durable = Buffer.from(contents);
      this.size = this.durableSize = contents.length;
    }
  }

  read(out: Uint8Array, offset: number, length: number, position: number): number {
    const n = Math.max(0, Math.min(length, this.size - position));
    out.set(this.data.subarray(position, position + n), offset);
    return n;
  }

  write(src: Uint8Array, offset: number, length: number, position: number): void {
    this.data = grow(this.data, position + length);
    this.data.set(src.subarray(offset, offset + length), position);
    if (position > this.size) this.data.fill(0, this.size, position);
    this.markDirty(Math.min(position, this.size), position + length);
    this.size = Math.max(this.size, position + length);
  }

  truncate(length: number): void {
    this.data = grow(this.data, length);
    if (length < this.size) this.data.fill(0, length, this.size);
    else this.data.fill(0, this.size, length);
    // Shrinking frees the pages past the cut: until an fsync makes the new size durable they are the disk's as it was.
    this.markDirty(Math.min(length, this.size), length);
    this.size = length;
  }

  private markDirty(from: number, to: number): void {
    for (let page = Math.floor(from / PAGE_BYTES); page * PAGE_BYTES < Math.max(to, from + 1); page++) this.dirty.add(page);
  }

  private writePage(page: number, bytes = PAGE_BYTES): void {
    const from = page * PAGE_BYTES;
    this.durable = grow(this.durable, from + PAGE_BYTES);
    this.durable.set(this.data.subarray(from, from + bytes), from);
  }

  /** fsync/fdatasync: every dirty page and the size reach the disk. */
  sync(): void {
    for (const page of this.dirty) this.writePage(page);
    this.durableSize = this.size;
    this.durable = grow(this.durable, this.size);
    this.durable.fill(0, this.size);
    this.dirty.clear();
  }

  /** A failed fsync: some pages reach the disk, the others never will, and all are marked clean. */
  failedSync(random: Random): void {
    for (const page of this.dirty) if (random() < 0.5) this.writePage(page);
    this.dirty.clear();
    if (random() < 0.5) this.durableSize = this.size;
  }

  /** What the disk holds after a power loss now. */
  afterCrash(random: Random): Buffer {
    const style = random();
    const keepNone = style < 0.15;
    const keepAll = style > 0.9;
    let size = this.durableSize;
    if (this.size !== this.durableSize && !keepNone) {
      const pick = random();
      const [low, high] = [Math.min(this.size, this.durableSize), Math.max(this.size, this.durableSize)];
      size = keepAll || pick < 0.4 ? this.size : pick < 0.6 ? this.durableSize : low + Math.floor(random() * (high - low + 1));
    }
    const out = Buffer.alloc(size);
    this.durable.copy(out, 0, 0, Math.min(size, this.durableSize));
    if (keepNone) return out;
    for (const page of this.dirty) {
      const from = page * PAGE_BYTES;
      // Bytes past the end of the file are never written back (past a lost truncate: the old ones stay).
      const to = Math.min(size, this.size, from + PAGE_BYTES);
      if (from >= to) continue;
      const fate = keepAll ? 0 : random();
      if (fate < 0.4)
        this.data.copy(out, from, from, to); // written
      else if (fate < 0.7)
        continue; // never written: the old contents (zeros past the old end)
      else if (fate < 0.85) {
        // the bytes not yet fsynced zero-filled (a sector holds the ones that were)
        for (let i = from; i < to; i++) if (i >= this.durableSize || this.data[i] !== this.durable[i]) out[i] = 0;
      } else this.data.copy(out, from, from, from + Math.floor(random() * (to - from))); // torn: a prefix written
    }
    return out;
  }
}

function grow(buffer: Buffer, length: number): Buffer {
  if (buffer.length >= length) return buffer;
  const out = Buffer.alloc(Math.max(length, buffer.length * 2, 4096));
  buffer.copy(out);
  return out;
}

type DirOp = { kind: 'link'; name: string; inode: Inode } | { kind: 'unlink'; name: string } | { kind: 'rename'; from: string; to: string; inode: Inode };

function fault(code: string, what: string): Error {
  return Object.assign(new Error(`${code}: ${what}`), { code });
}

/** The fake file system for one directory, `dir`; every operation counts as a step towards the crash point. */
export class PowerLossFs implements JournalFs {
  private names = new Map<string, Inode>();
  /** The directory as of its last fsync, and what changed since. */
  private durableNames = new Map<string, Inode>();
  private pending: DirOp[] = [];
  private fds = new Map<number, Inode | 'dir'>();
  private nextFd = 3;
  /** Operations so far; the crash comes before operation number `crashAt` (none while it is 0). */
  steps = 0;
  crashAt = 0;
  /** The fsync (file or directory, counted from 1) that fails, 0 for none; fsyncs so far. */
  failSyncAt = 0;
  syncs = 0;
  failedSyncs = 0;
  /**
   * Operations that fail as a disk's can, by kind: the nth open, write, fsync, rename, ... A write
   * fails after writing part of its bytes (ENOSPC), an fsync as a failed one, anything else with
   * EIO before it does anything.
   */
  private failPlan = new Map<string, number>();
  private seen = new Map<string, number>();
  failedOp: string | null = null;
  /** The directory's files as the disk holds them after the crash. */
  image: Map<string, Buffer> | null = null;
  /** Called at the crash point, before anything else happens (the harness notes what was acknowledged by then). */
  onCrash: () => void = () => {};

  constructor(
    readonly dir: string,
    private readonly random: Random,
    files?: Map<string, Buffer>,
  ) {
    for (const [name, contents] of files ?? []) {
      const inode = new Inode(contents);
      this.names.set(name, inode);
      this.durableNames.set(name, inode);
    }
  }

  /** Make the nth operation of each kind from now on fail (failPlan). */
  failFromNow(plan: Map<string, number>): void {
    this.failPlan = plan;
    this.seen.clear();
  }

  get crashed(): boolean {
    return this.image !== null;
  }

  /** Files whose names match, open or not (the harness's view of the directory as the process sees it). */
  has(name: string): boolean {
    return this.names.has(name);
  }

  /** Power off now: compute what the disk holds. */
  crash(): void {
    if (this.image) return;
    this.onCrash();
    const names = new Map(this.durableNames);
    const survive = Math.floor(this.random() * (this.pending.length + 1));
    for (const op of this.pending.slice(0, survive)) applyOp(names, op);
    this.image = new Map([...names].map(([name, inode]) => [name, inode.afterCrash(this.random)]));
  }

  /** Count an operation: throws at and after the power loss; true when it is one that fails (failPlan). */
  private step(what: string): boolean {
    if (this.image) throw fault('EIO', `${what} after the power loss`);
    this.steps++;
    if (this.crashAt > 0 && this.steps >= this.crashAt) {
      this.crash();
      throw fault('EIO', `${what} at the power loss`);
    }
    const nth = (this.seen.get(what) ?? 0) + 1;
    this.seen.set(what, nth);
    if (this.failPlan.get(what) !== nth) return false;
    this.failedOp = this.failedOp ? `${this.failedOp}+${what}` : what;
    return true;
  }

  /** Count an operation that, when it is the one to fail, fails before doing anything. */
  private plainStep(what: string): void {
    if (this.step(what)) throw fault('EIO', `${what} (injected)`);
  }

  private nameOf(path: string): string {
    if (!path.startsWith(`${this.dir}/`)) throw fault('ENOENT', path);
    return path.slice(this.dir.length + 1);
  }

  private inodeOf(path: string): Inode {
    const inode = this.names.get(this.nameOf(path));
    if (!inode) throw fault('ENOENT', path);
    return inode;
  }

  private fileOf(fd: number): Inode {
    const inode = this.fds.get(fd);
    if (inode === undefined) throw fault('EBADF', `fd ${fd}`);
    if (inode === 'dir') throw fault('EISDIR', `fd ${fd}`);
    return inode;
  }

  private changeDir(op: DirOp): void {
    applyOp(this.names, op);
    this.pending.push(op);
  }

  private doSync(fd: number, injected: boolean): void {
    this.syncs++;
    const target = this.fds.get(fd);
    if (target === undefined) throw fault('EBADF', `fd ${fd}`);
    const fails = injected || this.syncs === this.failSyncAt;
    if (target === 'dir') {
      const upTo = fails ? Math.floor(this.random() * (this.pending.length + 1)) : this.pending.length;
      for (const op of this.pending.slice(0, upTo)) applyOp(this.durableNames, op);
      this.pending = this.pending.slice(upTo);
    } else if (fails) target.failedSync(this.random);
    else target.sync();
    if (fails) {
      this.failedSyncs++;
      throw fault('EIO', 'fsync (injected)');
    }
  }

  openSync(path: string, flags: string): number {
    this.plainStep('open');
    const fd = this.nextFd++;
    if (path === this.dir) {
      this.fds.set(fd, 'dir');
      return fd;
    }
    const name = this.nameOf(path);
    let inode = this.names.get(name);
    if (flags === 'wx' && inode) throw fault('EEXIST', path);
    if (flags.startsWith('w')) {
      if (inode) inode.truncate(0);
      else {
        inode = new Inode();
        this.changeDir({ kind: 'link', name, inode });
      }
    }
    if (!inode) throw fault('ENOENT', path);
    this.fds.set(fd, inode);
    return fd;
  }

  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number {
    if (this.step('write')) {
      const part = Math.floor(this.random() * length);
      this.fileOf(fd).write(buffer, offset, part, position);
      throw fault('ENOSPC', `write (injected, ${part} of ${length} bytes written)`);
    }
    this.fileOf(fd).write(buffer, offset, length, position);
    return length;
  }

  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number {
    this.plainStep('read');
    return this.fileOf(fd).read(buffer, offset, length, position);
  }

  ftruncateSync(fd: number, length: number): void {
    this.plainStep('ftruncate');
    this.fileOf(fd).truncate(length);
  }

  fsyncSync(fd: number): void {
    this.doSync(fd, this.step('fsync'));
  }

  closeSync(fd: number): void {
    this.fds.delete(fd);
  }

  renameSync(from: string, to: string): void {
    this.plainStep('rename');
    const inode = this.inodeOf(from);
    this.changeDir({ kind: 'rename', from: this.nameOf(from), to: this.nameOf(to), inode });
  }

  rmSync(path: string): void {
    this.plainStep('unlink');
    const name = this.nameOf(path);
    if (this.names.has(name)) this.changeDir({ kind: 'unlink', name });
  }

  utimesSync(path: string, _atime: number, mtime: number): void {
    this.plainStep('utimes');
    this.inodeOf(path).mtimeMs = mtime * 1000;
  }

  mkdirSync(path: string): void {
    if (path !== this.dir) throw fault('EACCES', path);
  }

  readdirSync(path: string): string[] {
    if (path !== this.dir) throw fault('ENOENT', path);
    return [...this.names.keys()];
  }

  statSync(path: string): { mtimeMs: number; size: number } {
    const inode = this.inodeOf(path);
    return { mtimeMs: inode.mtimeMs, size: inode.size };
  }

  async open(path: string, flags: string): Promise<number> {
    await turn();
    return this.openSync(path, flags);
  }

  async write(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    await turn();
    return this.writeSync(fd, buffer, offset, length, position);
  }

  async read(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    await turn();
    return this.readSync(fd, buffer, offset, length, position);
  }

  async fdatasync(fd: number): Promise<void> {
    await turn();
    this.fsyncSync(fd);
  }

  async fsync(fd: number): Promise<void> {
    await turn();
    this.fsyncSync(fd);
  }

  async close(fd: number): Promise<void> {
    this.closeSync(fd);
  }
}

function applyOp(names: Map<string, Inode>, op: DirOp): void {
  if (op.kind === 'link') names.set(op.name, op.inode);
  else if (op.kind === 'unlink') names.delete(op.name);
  else if (names.get(op.from) === op.inode) {
    names.delete(op.from);
    names.set(op.to, op.inode);
  }
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
