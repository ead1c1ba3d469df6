// Optional durability (DATA_DIR): one append-only log per session, named by
// its token hash (never the token). Every change is appended (one write, with
// a checksum) before it is applied and acknowledged, so a crash loses only
// changes nobody was told succeeded. A restart reopens a session from its log
// on the first request with its token (dbOpenMs measures that). Nothing here
// runs without DATA_DIR: the store holds no journal then.
//
// Writes reach the OS before the answer is sent, which survives the process
// being killed; they are not fsynced one by one (that would cost a disk flush
// per request), so a power loss can lose the last moments.
import { appendFileSync, closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Metric, VectorType } from '../../config.js';
import type { Metadata, UpsertPlan } from '../../index/vector-index.js';
import type { Session } from '../session.js';
import { compactEntries } from './compact.js';
import { base64ToFloat32, CorruptLogError, decodeLog, encodeRecord, float32ToBase64 } from './records.js';

export type LogEntry =
  | { t: 'open'; v: 1; sessionId: string; createdAt: number }
  | { t: 'upsert'; at: number; dimensions: number; metric: Metric; vectorType?: VectorType; records: LogRecord[] }
  /** One part of an import: replayed only once all `parts` are on disk, so an import is all or nothing after a crash too. */
  | { t: 'import'; at: number; part: number; parts: number; dimensions: number; metric: Metric; vectorType?: VectorType; records: LogRecord[] }
  | { t: 'metadata'; at: number; id: string; metadata: Metadata }
  | { t: 'delete'; at: number; ids: string[] }
  | { t: 'clear'; at: number }
  | { t: 'reset'; at: number }
  | { t: 'touch'; at: number };
export interface LogRecord { id: string; v: string; m?: Metadata }
export type ChangeEntry = Exclude<LogEntry, { t: 'open' }>;

/** Records per import part: keeps each part far below the framing's size cap, however large the import. */
export const RECORDS_PER_IMPORT_PART = 1000;

const LOG_NAME = /^([0-9a-f]{64})\.log$/;
/** A log is compacted once it has grown by this much and by its own compacted size since the last time. */
const COMPACT_MIN_BYTES = 1024 * 1024;

/** What a reopen found wrong, for the operator's log. */
export interface RestoreReport {
  tornTail: string | null;
}

export class SessionJournal {
  /** lastAccessedAt last written for each session, so reads append a touch only now and then. */
  private readonly persistedAccess = new WeakMap<Session, number>();
  /** Bytes appended to each session's log since it was opened or compacted, and its size then. */
  private readonly growth = new WeakMap<Session, { appended: number; base: number }>();

  constructor(
    readonly dir: string,
    /** A read is recorded at most this often per session (its expiry after a restart may be this much early). */
    private readonly touchIntervalMs: number,
  ) {
    // Logs hold callers' vectors and metadata: readable by this user only.
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  private pathOf(tokenHash: string): string {
    return join(this.dir, `${tokenHash}.log`);
  }

  /** Sessions on disk: token hash -> last recorded access (the file's mtime, see stamp()). */
  scan(): Map<string, number> {
    const found = new Map<string, number>();
    for (const name of readdirSync(this.dir)) {
      // A compaction that a crash interrupted: the log it was replacing is intact.
      if (name.endsWith('.log.tmp')) rmSync(join(this.dir, name), { force: true });
      const match = LOG_NAME.exec(name);
      if (match) found.set(match[1], statSync(join(this.dir, name)).mtimeMs);
    }
    return found;
  }

  /** The same as scan(), with the event loop free between files (the server answers /readyz meanwhile). */
  async scanAsync(): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    for (const name of await readdir(this.dir)) {
      if (name.endsWith('.log.tmp')) await rm(join(this.dir, name), { force: true });
      const match = LOG_NAME.exec(name);
      if (match) found.set(match[1], (await stat(join(this.dir, name))).mtimeMs);
    }
    return found;
  }

  create(session: Session): void {
    const entry: LogEntry = { t: 'open', v: 1, sessionId: session.id, createdAt: session.createdAt };
    const path = this.pathOf(session.tokenHash);
    const bytes = encodeRecord(entry);
    writeFileSync(path, bytes, { flag: 'wx', mode: 0o600 });
    stamp(path, session.lastAccessedAt);
    this.growth.set(session, { appended: 0, base: bytes.length });
    this.persistedAccess.set(session, session.lastAccessedAt);
  }

  upsert(session: Session, plan: UpsertPlan, at: number): void {
    this.append(session, at, {
      t: 'upsert', at, dimensions: plan.dimensions, metric: plan.metric, vectorType: plan.vectorType,
      records: plan.records.map((record, i) => ({ id: record.id, v: float32ToBase64(plan.vectors[i]), m: record.metadata })),
    });
  }

  /** An import (one plan of any size) as parts that replay applies together, or not at all. */
  import(session: Session, plan: UpsertPlan, at: number): void {
    const parts = Math.max(1, Math.ceil(plan.records.length / RECORDS_PER_IMPORT_PART));
    for (let part = 0; part < parts; part++) {
      const from = part * RECORDS_PER_IMPORT_PART;
      const records: LogRecord[] = [];
      for (let i = from; i < Math.min(plan.records.length, from + RECORDS_PER_IMPORT_PART); i++) {
        records.push({ id: plan.records[i].id, v: float32ToBase64(plan.vectors[i]), m: plan.records[i].metadata });
      }
      this.append(session, at, { t: 'import', at, part, parts, dimensions: plan.dimensions, metric: plan.metric, vectorType: plan.vectorType, records });
    }
  }

  metadata(session: Session, id: string, metadata: Metadata, at: number): void {
    this.append(session, at, { t: 'metadata', at, id, metadata });
  }

  delete(session: Session, ids: string[], at: number): void {
    this.append(session, at, { t: 'delete', at, ids });
  }

  clear(session: Session, at: number): void {
    this.append(session, at, { t: 'clear', at });
  }

  reset(session: Session, at: number): void {
    this.append(session, at, { t: 'reset', at });
  }

  /** Record a read now and then, so a restart knows the session was still in use. */
  touched(session: Session): void {
    const at = session.lastAccessedAt;
    if (at - (this.persistedAccess.get(session) ?? 0) >= this.touchIntervalMs) this.append(session, at, { t: 'touch', at });
  }

  /** On shutdown: record the last access of every session whose latest read is not on disk yet. */
  flush(sessions: Iterable<Session>): void {
    for (const session of sessions) {
      const at = session.lastAccessedAt;
      if (at > (this.persistedAccess.get(session) ?? 0)) this.append(session, at, { t: 'touch', at });
    }
  }

  remove(tokenHash: string): void {
    rmSync(this.pathOf(tokenHash), { force: true });
  }

  /**
   * Rebuild a session from its log. A torn tail is cut off the file and
   * reported; damage before the end moves the file aside (`.corrupt`) and
   * throws CorruptLogError, touching no other session.
   */
  restore(tokenHash: string, make: (sessionId: string, createdAt: number) => Session): { session: Session; report: RestoreReport } {
    const path = this.pathOf(tokenHash);
    try {
      const log = decodeLog(readFileSync(path));
      if (log.tornTail) truncateSync(path, log.validBytes);
      const session = replay(log.records as LogEntry[], make);
      this.persistedAccess.set(session, session.lastAccessedAt);
      this.growth.set(session, { appended: 0, base: log.validBytes });
      return { session, report: { tornTail: log.tornTail } };
    } catch (err) {
      renameSync(path, `${path}.corrupt`);
      throw err instanceof CorruptLogError ? err : new CorruptLogError(`cannot replay: ${(err as Error).message}`);
    }
  }

  private append(session: Session, at: number, entry: LogEntry): void {
    const path = this.pathOf(session.tokenHash);
    const bytes = encodeRecord(entry);
    appendFileSync(path, bytes);
    this.persistedAccess.set(session, Math.max(at, this.persistedAccess.get(session) ?? 0));
    const growth = this.growth.get(session) ?? { appended: 0, base: 0 };
    growth.appended += bytes.length;
    this.growth.set(session, growth);
    if (growth.appended > Math.max(COMPACT_MIN_BYTES, growth.base)) {
      // The change is on disk already; a failed compaction only leaves the log long.
      try {
        this.compact(session);
      } catch (err) {
        rmSync(`${path}.tmp`, { force: true });
        console.error(`tempvec: could not compact the log of session ${session.id}:`, err);
      }
    }
    stamp(path, this.persistedAccess.get(session)!);
  }

  /**
   * Rewrite a log as its compacted form: written to a temporary file,
   * fsynced, then renamed over the log, so a crash leaves either the old log
   * or the new one, never a mix. Amortised: a log is rewritten only after it
   * has grown by its own compacted size.
   */
  private compact(session: Session): void {
    const path = this.pathOf(session.tokenHash);
    const log = decodeLog(readFileSync(path));
    const bytes = Buffer.concat(compactEntries(log.records as LogEntry[]).map(encodeRecord));
    const temp = `${path}.tmp`;
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeSync(fd, bytes);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
    const dir = openSync(this.dir, 'r');
    try {
      fsyncSync(dir); // the rename itself
    } finally {
      closeSync(dir);
    }
    this.growth.set(session, { appended: 0, base: bytes.length });
  }
}

/**
 * A log's mtime is its session's last recorded access, on the store's clock
 * (the same as the wall clock in production): scan() reads it to expire
 * sessions on disk without opening their logs.
 */
function stamp(path: string, at: number): void {
  utimesSync(path, at / 1000, at / 1000);
}

/** Apply a log's entries, in order, to a new session. */
export function replay(entries: readonly LogEntry[], make: (sessionId: string, createdAt: number) => Session): Session {
  const [open, ...changes] = entries;
  if (!open || open.t !== 'open' || open.v !== 1) throw new CorruptLogError('the log does not start with an open record');
  const session = make(open.sessionId, open.createdAt);
  const { index } = session;
  const imported = new ImportParts();
  for (const entry of changes) {
    switch (entry.t) {
      case 'import': {
        const records = imported.add(entry);
        if (!records) continue; // more parts to come (or a crash cut them off: then never applied)
        index.upsert(
          records.map((r) => ({ id: r.id, vector: base64ToFloat32(r.v), metadata: r.m })),
          { dimensions: entry.dimensions, metric: entry.metric, vectorType: entry.vectorType },
        );
        break;
      }
      case 'upsert':
        index.upsert(
          entry.records.map((r) => ({ id: r.id, vector: base64ToFloat32(r.v), metadata: r.m })),
          { dimensions: entry.dimensions, metric: entry.metric, vectorType: entry.vectorType },
        );
        break;
      case 'metadata':
        index.setMetadata(entry.id, entry.metadata);
        break;
      case 'delete':
        index.delete(entry.ids);
        break;
      case 'clear':
        index.clear();
        break;
      case 'reset':
        index.reset();
        break;
      case 'touch':
        break;
      default:
        throw new CorruptLogError(`unknown record type ${(entry as { t: unknown }).t}`);
    }
    if (entry.t !== 'touch') session.markUpdated(entry.at);
    session.touch(Math.max(session.lastAccessedAt, entry.at));
  }
  return session;
}

/** Collects the parts of an import; add() returns all its records once the last part arrives. */
export class ImportParts {
  private records: LogRecord[] = [];
  private expected = 0;

  add(entry: Extract<LogEntry, { t: 'import' }>): LogRecord[] | null {
    if (entry.part !== this.expected) throw new CorruptLogError(`import part ${entry.part} follows part ${this.expected - 1}`);
    for (const record of entry.records) this.records.push(record);
    if (entry.part + 1 < entry.parts) {
      this.expected++;
      return null;
    }
    const all = this.records;
    this.records = [];
    this.expected = 0;
    return all;
  }
}
