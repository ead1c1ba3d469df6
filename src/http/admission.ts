// Admission of request bodies: caps on bodies in flight (in all and per
// token, keyed on the token's hash) and on their bytes, and a minimum arrival
// rate. A body past a cap is refused before it is read. Its bytes count as
// they arrive (every RATE_CHECK_MS), never its announced length up front, so
// a body that trickles holds only what it sent; a body whose bytes take the
// total past its cap is answered 503 and its connection closed. One that,
// after BODY_GRACE_MS, brings fewer than MIN_BODY_BYTES_PER_SEC in a window of
// BODY_GRACE_MS is answered 408 and its connection closed: sending the start
// of a body fast and then stalling buys one window, not minutes.
// A small body (announced length at most smallBodyBytes) is admitted in a lane
// of its own (MAX_SMALL_BODIES_IN_FLIGHT, its bytes bounded by that count), so
// large bodies held open at the minimum rate cannot lock ordinary API calls out.
// Large bodies are also capped per client address (IPv6 by its /64).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Middleware } from 'koa';
import { type Config, SPEC_LIMITS } from '../config.js';
import { apiError } from '../errors.js';
import { tokenKey } from './auth.js';
import { clientKey } from './rate-limit.js';
import { Tally } from '../limits/tally.js';

interface BodyInFlight {
  req: IncomingMessage;
  res: ServerResponse;
  /** The token's hash (tokenKey): '' without a bearer token. */
  token: string;
  /** The client address's key (clientKey: IPv6 by its /64). */
  address: string;
  /** In the small bodies' lane (announced length at most smallBodyBytes): not counted against the large bodies' caps. */
  small: boolean;
  /** socket.bytesRead when the body was admitted (a listener on the body would start it flowing before its reader). */
  bytesReadBefore: number;
  /** Bytes counted against maxBodyBytesInFlight: what arrived so far. */
  reserved: number;
  /** The start of the current rate window, and the bytes received by then. */
  windowStart: number;
  receivedAtWindowStart: number;
}

/** How often bodies in flight are checked against the minimum rate. */
const RATE_CHECK_MS = 100;

export class BodyAdmission {
  private readonly inFlight = new Set<BodyInFlight>();
  private readonly perToken = new Tally();
  /** Large bodies in flight per client address. */
  private readonly perAddress = new Tally();
  /** Large bodies in flight (the small ones are inFlight.size - large) and their received bytes. */
  private large = 0;
  private reservedBytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: Config,
    private readonly now: () => number = Date.now,
  ) {}

  /** Large bodies and their bytes being received now, and small bodies. */
  get usage() {
    return { bodiesInFlight: this.large, bodyBytesInFlight: this.reservedBytes, smallBodiesInFlight: this.inFlight.size - this.large };
  }

  readonly middleware: Middleware = async (ctx, next) => {
    const { req, res } = ctx;
    const announced = req.headers['content-length'];
    const length = announced === undefined ? 0 : Number(announced);
    const chunked = req.headers['transfer-encoding'] !== undefined;
    if (!(length > 0 || chunked) || req.readableEnded) return next();
    this.admit(req, res, clientKey(ctx.ip), !chunked && length <= SPEC_LIMITS.smallBodyBytes);
    return next();
  };

  private admit(req: IncomingMessage, res: ServerResponse, address: string, small: boolean): void {
    const { config } = this;
    const retry = { 'Retry-After': '1', Connection: 'close' };
    if (small && this.inFlight.size - this.large >= config.maxSmallBodiesInFlight) {
      throw apiError(
        'SERVER_AT_CAPACITY',
        `the server is receiving its maximum of ${config.maxSmallBodiesInFlight} small request bodies; try again shortly`,
        { maxSmallBodiesInFlight: config.maxSmallBodiesInFlight },
        retry,
      );
    }
    if (!small && this.large >= config.maxBodiesInFlight) {
      throw apiError(
        'SERVER_AT_CAPACITY',
        `the server is receiving its maximum of ${config.maxBodiesInFlight} request bodies; try again shortly`,
        undefined,
        retry,
      );
    }
    const token = tokenKey(req.headers.authorization);
    const ofToken = this.perToken.of(token);
    if (token !== '' && ofToken >= config.maxBodiesInFlightPerToken) {
      throw apiError(
        'RATE_LIMITED',
        `this token already has ${ofToken} request bodies in flight, the most at once; wait for one to finish`,
        { limit: config.maxBodiesInFlightPerToken },
        retry,
      );
    }
    const ofAddress = small ? 0 : this.perAddress.of(address);
    if (config.maxBodiesInFlightPerAddress > 0 && ofAddress >= config.maxBodiesInFlightPerAddress) {
      throw apiError(
        'RATE_LIMITED',
        `this address already has ${ofAddress} large request bodies in flight, the most at once; wait for one to finish`,
        { maxBodiesInFlightPerAddress: config.maxBodiesInFlightPerAddress },
        retry,
      );
    }
    // Room for at least one byte more: the body's bytes are counted as they arrive.
    if (!small && this.reservedBytes >= config.maxBodyBytesInFlight) {
      throw apiError(
        'SERVER_AT_CAPACITY',
        'the server is receiving its maximum of request body bytes; try again shortly',
        { maxBodyBytesInFlight: config.maxBodyBytesInFlight },
        retry,
      );
    }
    // The grace comes before the first window.
    const windowStart = this.now() + config.bodyGraceMs;
    const body: BodyInFlight = { req, res, token, address, small, bytesReadBefore: req.socket.bytesRead, reserved: 0, windowStart, receivedAtWindowStart: 0 };
    this.inFlight.add(body);
    if (!small) {
      this.large++;
      this.perAddress.add(address);
    }
    this.perToken.add(token);
    const release = () => {
      this.forget(body);
      if (this.inFlight.size === 0) this.stopTimer();
    };
    req.once('end', release);
    req.once('close', release);
    res.once('close', release);
    res.once('finish', release);
    this.timer ??= setInterval(() => this.cutSlowBodies(), RATE_CHECK_MS).unref();
  }

  /** Count what each body received; answer 503 past the bytes in flight, 408 to one slower than the minimum rate; close its connection. */
  private cutSlowBodies(): void {
    const { bodyGraceMs, minBodyBytesPerSec, maxBodyBytesInFlight } = this.config;
    const now = this.now();
    for (const body of this.inFlight) {
      const received = body.req.socket ? body.req.socket.bytesRead - body.bytesReadBefore : 0;
      if (!body.small && received > body.reserved) {
        this.reservedBytes += received - body.reserved;
        body.reserved = received;
      }
      if (!body.small && this.reservedBytes > maxBodyBytesInFlight && received > 0) {
        this.cut(
          body,
          503,
          'SERVER_AT_CAPACITY',
          'the server filled its maximum of request body bytes while this body arrived; nothing was stored, try again shortly',
        );
        continue;
      }
      const window = now - body.windowStart;
      if (window < bodyGraceMs) continue;
      if (received - body.receivedAtWindowStart >= (minBodyBytesPerSec * window) / 1000) {
        body.windowStart = now;
        body.receivedAtWindowStart = received;
        continue;
      }
      this.cut(
        body,
        408,
        'REQUEST_TIMEOUT',
        `the request body arrived slower than ${minBodyBytesPerSec} bytes/s over ${bodyGraceMs} ms (after the first ${bodyGraceMs} ms); send it faster or in smaller requests`,
      );
    }
    if (this.inFlight.size === 0) this.stopTimer();
  }

  private cut(body: BodyInFlight, status: number, code: string, message: string): void {
    this.forget(body);
    answerAndClose(body.res, status, code, message);
  }

  /** The body no longer counts (idempotent). */
  private forget(body: BodyInFlight): void {
    if (!this.inFlight.delete(body)) return;
    if (!body.small) {
      this.large--;
      this.perAddress.remove(body.address);
    }
    this.reservedBytes -= body.reserved;
    this.perToken.remove(body.token);
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** The JSON error body of the service, as text. */
export function errorBody(code: string, message: string): string {
  return JSON.stringify({ success: false, error: { code, message } });
}

/** Answer an error outside Koa (the route is still waiting for the body) and close the connection once it is sent. */
function answerAndClose(res: ServerResponse, status: number, code: string, message: string): void {
  const socket = res.socket;
  if (res.headersSent || !socket || socket.destroyed) {
    socket?.destroy();
    return;
  }
  const body = errorBody(code, message);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
  res.end(body, () => socket.destroy());
}
