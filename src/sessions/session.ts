// One anonymous caller's session: its timestamps and its index.
import { v4 as uuidv4 } from 'uuid';
import type { Backend } from '../config.js';
import { VectorIndex } from '../index/vector-index.js';
import { backendOf } from '../kernel/kernel-module.js';
import { SessionGate } from './session-gate.js';

/** ISO form of a timestamp, recomputed only when the timestamp changes (every response shows four). */
class IsoDate {
  private ms = NaN;
  private text = '';

  of(ms: number): string {
    if (ms !== this.ms) {
      this.text = new Date(ms).toISOString();
      this.ms = ms;
    }
    return this.text;
  }
}

/** What work done for a session ahead of its turn needs: its index, and its token (whose turns the work takes). */
export type SessionWork = Pick<Session, 'index' | 'tokenHash'>;

export class Session {
  readonly id: string;
  readonly createdAt: number;
  updatedAt: number;
  lastAccessedAt: number;
  readonly index: VectorIndex;
  /** The kernel build that answers its searches. */
  readonly backend: Backend;
  /** The order of its writes and searches (session-gate.ts). */
  readonly gate = new SessionGate();
  private readonly iso = { created: new IsoDate(), updated: new IsoDate(), accessed: new IsoDate(), expires: new IsoDate() };

  constructor(
    readonly tokenHash: string,
    kernelModule: WebAssembly.Module,
    maxVectors: number,
    private readonly ttlMs: number,
    now: number,
    /** Identity of a session reopened from DATA_DIR. */
    restored?: { id: string; createdAt: number },
  ) {
    this.id = restored?.id ?? uuidv4();
    this.createdAt = restored?.createdAt ?? now;
    this.updatedAt = this.lastAccessedAt = this.createdAt;
    this.index = new VectorIndex(kernelModule, maxVectors);
    this.backend = backendOf(kernelModule);
  }

  /**
   * Once no add or import is being applied in slices: a read outside the gate
   * (get, has, export, GET /session) awaits it first, so it sees a change all
   * or not at all. Undefined when none is (the read goes on in its tick).
   */
  settled(): Promise<void> | undefined {
    return this.index.settled();
  }

  get expiresAt(): number {
    return this.lastAccessedAt + this.ttlMs;
  }

  isExpired(now: number): boolean {
    return now >= this.expiresAt;
  }

  /** Every authenticated request slides the expiry forward. */
  touch(now: number): void {
    this.lastAccessedAt = now;
  }

  /** A change at `now` is also an access: lastAccessedAt never reads earlier than updatedAt. */
  markUpdated(now: number): void {
    this.updatedAt = now;
    if (now > this.lastAccessedAt) this.lastAccessedAt = now;
  }

  /** The `session` object of every response (spec section 2). */
  view(now: number) {
    const config = this.index.getConfig();
    const { iso } = this;
    return {
      sessionId: this.id,
      createdAt: iso.created.of(this.createdAt),
      updatedAt: iso.updated.of(this.updatedAt),
      lastAccessedAt: iso.accessed.of(this.lastAccessedAt),
      expiresAt: iso.expires.of(this.expiresAt),
      ttlMsRemaining: Math.max(0, this.expiresAt - now),
      initialized: this.index.initialized,
      vectorCount: this.index.liveSize,
      maxVectors: this.index.maxVectors,
      config: {
        dimensions: config.dimensions,
        metric: config.metric,
        vectorType: config.vectorType,
        backend: this.backend,
        analyzer: config.analyzer,
        embedding: config.embedding,
      },
    };
  }

  /**
   * JSON.stringify(view(now)), reused while nothing it shows has changed: the
   * same millisecond, no access, change or add since (a busy session answers
   * several requests a millisecond, each with this same text).
   */
  viewJson(now: number): string {
    const shown = this.shownView;
    const config = this.index.getConfig();
    const size = this.index.liveSize;
    if (
      shown.json === '' ||
      shown.now !== now ||
      shown.lastAccessedAt !== this.lastAccessedAt ||
      shown.updatedAt !== this.updatedAt ||
      shown.size !== size ||
      shown.config !== config
    ) {
      shown.json = JSON.stringify(this.view(now));
      shown.now = now;
      shown.lastAccessedAt = this.lastAccessedAt;
      shown.updatedAt = this.updatedAt;
      shown.size = size;
      shown.config = config;
    }
    return shown.json;
  }

  /** What viewJson last returned and what it was made from (the index's configuration is replaced on every change, never mutated). */
  private readonly shownView = { json: '', now: 0, lastAccessedAt: 0, updatedAt: 0, size: 0, config: null as object | null };

  /** The `stats` object of GET /session: what the session holds and costs. */
  stats() {
    const config = this.index.getConfig();
    const dims = config.dimensions ?? 0;
    const held = this.index.stats();
    return {
      vectorCount: this.index.liveSize,
      dimensions: config.dimensions,
      metric: config.metric,
      vectorType: config.vectorType,
      vectorBytes: this.index.size * dims * 4,
      codeBytes: config.vectorType === 'int8' ? this.index.size * Math.ceil(dims / 32) * 32 : 0,
      rowCapacity: held.rowCapacity,
      linearMemoryBytes: held.memoryBytes,
      linearMemoryUsedBytes: held.usedBytes,
      heapBytes: held.heapBytes,
      metadataBytes: held.metadataBytes,
      metadataJsonBytes: held.metadata.jsonBytes,
      filterIndexEntries: held.metadata.indexEntries,
      textBytes: held.textBytes,
      textIndexBytes: held.text.indexBytes,
      textIndexTerms: held.text.terms,
    };
  }

  /** The `usage` object: how much of the session's allowance is used. */
  usage() {
    return {
      vectorCount: this.index.liveSize,
      maxVectors: this.index.maxVectors,
      vectorsRemaining: this.index.maxVectors - this.index.liveSize,
      fractionUsed: this.index.liveSize / this.index.maxVectors,
    };
  }
}
