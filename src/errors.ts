// Every error the service answers with. Code anywhere throws an ApiError; the
// one error middleware (src/http/error-handler.ts) turns it into the body
//   { success: false, error: { code, message, details? }, metrics }.
// The index layer throws these too, so the in-browser index reports the same
// codes as the server.

export type ErrorDetails = Record<string, unknown>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    /** Extra response headers, e.g. Allow or Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Every stable error code, with its HTTP status (the README and OpenAPI list these). */
export const ERROR_CODES = {
  UNAUTHORIZED: 401,
  INVALID_TOKEN: 401,
  SESSION_EXPIRED: 401,
  INVALID_JSON: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 400,
  DIMENSION_MISMATCH: 400,
  ZERO_VECTOR: 400,
  BATCH_TOO_LARGE: 400,
  INVALID_CURSOR: 400,
  INVALID_IMPORT: 400,
  METRIC_LOCKED: 409,
  VECTOR_TYPE_LOCKED: 409,
  ANALYZER_LOCKED: 409,
  ANALYZER_CHANGED: 409,
  EMBEDDING_LOCKED: 409,
  NO_EMBEDDING_MODEL: 400,
  QUERY_TEXT_EMPTY: 400,
  CAPACITY_EXCEEDED: 409,
  VECTOR_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  IMPORT_LINE_TOO_LARGE: 413,
  REQUEST_TIMEOUT: 408,
  HEADERS_TOO_LARGE: 431,
  BAD_REQUEST: 400,
  ANSWER_TOO_LARGE: 400,
  RATE_LIMITED: 429,
  TOO_MANY_SESSIONS: 429,
  SERVER_AT_CAPACITY: 503,
  INSTANCE_UNAVAILABLE: 503,
  KERNEL_THREAD_FAILED: 503,
  EMBEDDING_BUSY: 503,
  EMBEDDING_UNAVAILABLE: 503,
  EMBEDDING_UPSTREAM_ERROR: 502,
  DISK_QUOTA_EXCEEDED: 507,
  SESSION_LOG_FULL: 507,
  INTERNAL_ERROR: 500,
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

export function apiError(code: ErrorCode, message: string, details?: ErrorDetails, headers?: Record<string, string>) {
  return new ApiError(ERROR_CODES[code], code, message, details, headers);
}

/** Escape one key for a JSON Pointer (RFC 6901). */
export function pointer(...path: (string | number)[]): string {
  return path.map((p) => '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}
