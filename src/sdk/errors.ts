// The SDK's errors, thrown by the client and by the local index alike.
import type * as t from './types.js';

export class TempvecError extends Error {
  constructor(
    /** The HTTP status; 0 when no answer came (NETWORK_ERROR, BASE_URL_REQUIRED, KERNEL_UNAVAILABLE, MODEL_UNAVAILABLE). */
    readonly status: number,
    /** The server's stable error code (VALIDATION_ERROR, DIMENSION_MISMATCH, ...), or one of the SDK's own. */
    readonly code: t.TempvecErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TempvecError';
  }
}

/** The session and everything in its index are gone; call createToken() to start again. */
export class SessionExpiredError extends TempvecError {
  constructor(message: string, details?: Record<string, unknown>) {
    super(401, 'SESSION_EXPIRED', message, details);
    this.name = 'SessionExpiredError';
  }
}
