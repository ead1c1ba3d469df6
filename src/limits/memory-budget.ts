// MEMORY_BUDGET_BYTES: one budget for every byte a caller can make the server
// hold. Stored: the sessions' linear memories, their metadata stores (arena
// and filter index, in ArrayBuffers: counted as allocated) and the JS heap
// their ids take (estimated per id, src/index/heap-size.ts), with their
// insertion logs' dead entries, their filter indexes' path caches and the
// token hashes remembered without a session. In flight: request bodies being read and parsed,
// and answers being built or sent; with DATA_DIR, the buffers of session logs
// being reopened or compacted (counted, never refused: PERSISTENCE_JOBS caps
// them); the embedding threads' models and the vectors of texts being
// embedded (src/embedding/embedding-pool.ts). A request that would take the total past
// the budget is refused up front with 503 SERVER_AT_CAPACITY and Retry-After.
// Stored data may take only its share (memoryStoredMaxBytes, config.ts): a
// write past it is refused while bodies and answers still fit in the rest, so
// writers filling what they may cannot deny other sessions' reads.
import { memoryStoredMaxBytes } from '../config.js';
import { apiError, type ErrorDetails } from '../errors.js';

export type InFlightKind = 'bodies' | 'answers' | 'persistence' | 'embedding';

/** Bytes held for one request until it gives them back (release() is idempotent). */
export interface Reservation {
  readonly bytes: number;
  /**
   * The request took on `bytes` more after it was admitted (negative: gave
   * some back): counted, never refused, so later requests see them. A no-op
   * once released.
   */
  grow(bytes: number): void;
  release(): void;
}

const NOTHING: Reservation = { bytes: 0, grow() {}, release() {} };

export class MemoryBudget {
  private linear = 0;
  private heap = 0;
  private metadata = 0;
  private readonly inFlight: Record<InFlightKind, number> = { bodies: 0, answers: 0, persistence: 0, embedding: 0 };

  /**
   * `limitBytes` 0: no budget (nothing is refused; usage is still counted).
   * Only tests change it after start-up, to leave a known room above what is used.
   */
  constructor(
    public limitBytes: number,
    private readonly retryAfterSeconds: number,
    /** The most of it that may be JS heap in this process (heap-limit.ts: what its heap limit holds). */
    readonly heapCapBytes = Infinity,
  ) {}

  /** Stored bytes changed by these amounts (the session store reports each session's change). */
  adjustStored(linearDelta: number, heapDelta: number, metadataDelta = 0): void {
    this.linear += linearDelta;
    this.heap += heapDelta;
    this.metadata += metadataDelta;
  }

  get linearMemoryBytes(): number {
    return this.linear;
  }

  get heapBytes(): number {
    return this.heap;
  }

  get metadataBytes(): number {
    return this.metadata;
  }

  /** Bytes stored data may take (the budget's share for it; 0: no budget). */
  get storedLimitBytes(): number {
    return memoryStoredMaxBytes(this.limitBytes);
  }

  /** Bytes of stored data counted: linear memories, heap, metadata and text stores. */
  get storedBytes(): number {
    return this.linear + this.heap + this.metadata;
  }

  get usedBytes(): number {
    return this.linear + this.heap + this.metadata + this.inFlight.bodies + this.inFlight.answers + this.inFlight.persistence + this.inFlight.embedding;
  }

  /** Throw 503 SERVER_AT_CAPACITY when `bytes` more (`heapBytes` of them JS heap) would pass the budget or the heap's cap. */
  assertRoom(bytes: number, message: string, details: ErrorDetails = {}, heapBytes = 0): void {
    if (this.limitBytes === 0 || bytes <= 0) return;
    const fits = this.usedBytes + bytes <= this.limitBytes && (heapBytes <= 0 || this.heap + this.inFlight.answers + heapBytes <= this.heapCapBytes);
    if (fits) return;
    throw this.atCapacity(bytes, message, details);
  }

  /** assertRoom() for `bytes` more of stored data: they must also fit in the stored share (memoryStoredMaxBytes). */
  assertStoredRoom(bytes: number, message: string, details: ErrorDetails = {}, heapBytes = 0): void {
    if (this.limitBytes === 0 || bytes <= 0) return;
    if (this.storedBytes + bytes > this.storedLimitBytes) {
      throw this.atCapacity(bytes, message, { ...details, memoryStoredMaxBytes: this.storedLimitBytes, storedBytes: this.storedBytes });
    }
    this.assertRoom(bytes, message, details, heapBytes);
  }

  private atCapacity(bytes: number, message: string, details: ErrorDetails) {
    return apiError(
      'SERVER_AT_CAPACITY',
      message,
      {
        ...details,
        memoryBudgetBytes: this.limitBytes,
        usedBytes: this.usedBytes,
        requestedBytes: bytes,
      },
      { 'Retry-After': String(this.retryAfterSeconds) },
    );
  }

  /** Hold `bytes` for a body or an answer in flight, or throw 503 when they do not fit. */
  reserve(kind: InFlightKind, bytes: number, message: string): Reservation {
    if (bytes <= 0) return NOTHING;
    this.assertRoom(bytes, message);
    return this.hold(kind, bytes);
  }

  /** Count `bytes` held (and what they grow by) without refusing them: work whose number is capped elsewhere. */
  hold(kind: InFlightKind, bytes: number): Reservation {
    this.inFlight[kind] += bytes;
    let held = true;
    let total = bytes;
    return {
      get bytes() {
        return total;
      },
      grow: (more: number) => {
        if (!held) return;
        total += more;
        this.inFlight[kind] += more;
      },
      release: () => {
        if (!held) return;
        held = false;
        this.inFlight[kind] -= total;
      },
    };
  }

  /** What GET /limits and GET /session show. */
  usage() {
    return {
      memoryBudgetBytes: this.limitBytes,
      memoryUsedBytes: this.usedBytes,
      linearMemoryBytes: this.linear,
      heapBytes: this.heap,
      metadataBytes: this.metadata,
      bodiesInFlightBytes: this.inFlight.bodies,
      answersInFlightBytes: this.inFlight.answers,
      embeddingBytes: this.inFlight.embedding,
    };
  }

  /** Bytes held by reopens and compactions of session logs (in memoryUsedBytes; not yet a field of GET /limits). */
  get persistenceBytes(): number {
    return this.inFlight.persistence;
  }
}
