// The answers of the client's routes, in plain TypeScript like the shapes
// they carry (types.ts); src/sdk/types-check.ts makes the build fail if they
// drift from the response schemas (src/schemas/responses.ts).
import type {
  EmbedResult,
  FacetRange,
  Limits,
  ListedVector,
  Metadata,
  Metric,
  Metrics,
  SearchGroup,
  SearchHit,
  SearchStats,
  Session,
  StoredVector,
  VectorType,
} from './types.js';

/** Fields every success response has. */
export interface Envelope {
  success: true;
  metrics: Metrics;
}
export interface WithSession extends Envelope {
  session: Session;
}

export interface TokenResponse extends WithSession {
  token: string;
  tokenType: 'Bearer';
  limits: Limits;
}
export interface LimitsResponse extends Envelope {
  limits: Limits;
  usage: { activeSessions: number; maxSessions: number } & MemoryUsage;
}
/** What the server's memory budget counts now. */
export interface MemoryUsage {
  memoryBudgetBytes: number;
  memoryUsedBytes: number;
  linearMemoryBytes: number;
  heapBytes: number;
  metadataBytes: number;
  bodiesInFlightBytes: number;
  answersInFlightBytes: number;
  /** The embedding threads started (each its model) and the vectors of texts being embedded. */
  embeddingBytes: number;
}
export interface SessionResponse extends WithSession {
  stats: {
    vectorCount: number;
    dimensions: number | null;
    metric: Metric | null;
    vectorType: VectorType;
    vectorBytes: number;
    codeBytes: number;
    rowCapacity: number;
    linearMemoryBytes: number;
    linearMemoryUsedBytes: number;
    heapBytes: number;
    metadataBytes: number;
    metadataJsonBytes: number;
    filterIndexEntries: number;
    textBytes: number;
    textIndexBytes: number;
    textIndexTerms: number;
  };
  usage: { vectorCount: number; maxVectors: number; vectorsRemaining: number; fractionUsed: number };
  serverMemory: MemoryUsage;
  limits: Limits;
}
export interface ResetResponse extends WithSession {
  mutation: { reset: true; deleted: number };
}
export interface HasResponse extends WithSession {
  id: string;
  has: boolean;
}
export interface GetResponse extends WithSession {
  vector: StoredVector;
}
export interface GetManyResponse extends WithSession {
  vectors: StoredVector[];
  notFound: string[];
}
export interface MetadataResponse extends WithSession {
  id: string;
  metadata: Metadata;
}
export interface SetMetadataResponse extends MetadataResponse {
  mutation: { updated: number };
}
export interface AddResponse extends WithSession {
  id: string;
  mutation: { added: number; replaced: number };
}
export interface AddManyResponse extends WithSession {
  mutation: { added: number; replaced: number };
}
export interface DeleteResponse extends WithSession {
  id: string;
  mutation: { deleted: number; notFound: string[] };
}
export interface DeleteManyResponse extends WithSession {
  mutation: { deleted: number; notFound: string[] };
}
export interface TouchResponse extends WithSession {
  mutation: { touched: number; notFound: string[] };
}
export interface ClearResponse extends WithSession {
  mutation: { deleted: number };
}
export interface CountResponse extends WithSession {
  count: number;
}
export interface FacetResponse extends WithSession {
  /** By count, descending, then by value: numbers, strings (by code point), false, true, null. */
  values: { value: number | string | boolean | null; count: number }[];
  /** Distinct values counted above 0. */
  distinctValues: number;
  /** Rows holding a string longer than maxIndexedValueBytes at the path (not counted as values). */
  longStrings: number;
  /** With ranges: each range asked, in order, with its count. */
  ranges?: (FacetRange & { count: number })[];
}
export interface ListResponse extends WithSession {
  vectors: ListedVector[];
  nextCursor: string | null;
}
export interface ImportResponse extends WithSession {
  mutation: { added: number; replaced: number };
}
export interface SearchResponse extends WithSession {
  results: SearchHit[];
  stats: SearchStats;
}
export interface SearchManyResponse extends WithSession {
  results: SearchHit[][];
  stats: SearchStats;
}
/** A search with groupBy. */
export interface GroupedSearchResponse extends WithSession {
  groups: SearchGroup[];
  stats: SearchStats;
}
export interface GroupedSearchManyResponse extends WithSession {
  groups: SearchGroup[][];
  stats: SearchStats;
}
/** What /search answers on the wire: results, or groups with groupBy (types-check.ts holds the schema to it). */
export interface SearchAnswer extends WithSession {
  results?: SearchHit[];
  groups?: SearchGroup[];
  stats: SearchStats;
}
export interface SearchManyAnswer extends WithSession {
  results?: SearchHit[][];
  groups?: SearchGroup[][];
  stats: SearchStats;
}

/** POST /embed's answer (client.embed), its vectors decoded. */
export interface EmbedResponse extends EmbedResult, Envelope {}
