// What an index holds, as its one writer (VectorIndex) holds it and as the
// readers (planning, search, listing, export) see it: the read side apart from
// the write side, so a search cannot change what it reads.
import type { KernelInstance } from '../kernel/kernel-instance.js';
import type { MemoryGuard } from '../kernel/search-request.js';
import type { MetadataStore } from './metadata/metadata-store.js';
import type { ExpiryRead, RowExpiry } from './row-expiry.js';
import type { RowsRead, RowTable } from './row-table.js';
import type { TextStore } from './text/text-store.js';
import type { IndexConfig } from './types.js';

export interface IndexRead {
  /** Replaced, never mutated, on each change. */
  readonly config: Readonly<IndexConfig>;
  /** Null until the first add and after a reset. */
  readonly kernel: Pick<KernelInstance, 'dim' | 'readRow' | 'search' | 'memoryBytesFor' | 'rowKeys' | 'withGatheredRows' | 'seqs'> | null;
  readonly rows: RowsRead;
  readonly metadata: Pick<
    MetadataStore,
    'evaluate' | 'prepare' | 'values' | 'rowEntries' | 'json' | 'jsonLength' | 'entriesOf' | 'measure' | 'growthUpper' | 'valuesAt' | 'object' | 'changes'
  >;
  readonly texts: Pick<TextStore, 'has' | 'json' | 'jsonLength' | 'searchSteps'>;
  /** Each row's ttl and expiry (per-record TTL); a read leaves out a row expired at clock() (live-rows.ts). */
  readonly expiry: ExpiryRead;
  /** The time reads and writes take (ms since the epoch): Date.now, or a test's. */
  readonly clock: () => number;
  /** Asked before a search grows the linear memory for its scratch (VectorIndex.memoryGuard). */
  readonly memoryGuard: MemoryGuard | null;
  /** MAX_VECTORS_PER_SESSION, or more while a reopen replays rows (VectorIndex.allowRows). */
  readonly maxVectors: number;
  /** UTF-8 bytes of the longest text a vector may have (MAX_TEXT_BYTES). */
  readonly maxTextBytes: number;
  /** Bumped by every change, so a stale UpsertPlan is refused. */
  readonly version: number;
}

/** The same, as the writer changes it. */
export interface IndexState extends IndexRead {
  config: Readonly<IndexConfig>;
  kernel: KernelInstance | null;
  readonly rows: RowTable;
  readonly metadata: MetadataStore;
  readonly texts: TextStore;
  readonly expiry: RowExpiry;
  clock: () => number;
  memoryGuard: MemoryGuard | null;
  maxVectors: number;
  maxTextBytes: number;
  version: number;
}
