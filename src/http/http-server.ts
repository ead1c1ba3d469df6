// The Node HTTP server around the app, with the connection limits of the
// configuration: a connection cap, header, idle and socket timeouts, and
// Node's own client errors (bad HTTP, headers too large or too slow)
// answered as our JSON errors where the socket still allows it. Requests
// start paced by turns of the loop (request-starts.ts).
import { createServer, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import type { Config } from '../config.js';
import { errorBody } from './admission.js';
import { RequestStarts } from './request-starts.js';

/** Node's client error codes, as our status, code and message. */
function clientErrorAnswer(code: string | undefined): [number, string, string, string] {
  if (code === 'HPE_HEADER_OVERFLOW') return [431, 'Request Header Fields Too Large', 'HEADERS_TOO_LARGE', 'the request line and headers are too large'];
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'Request Timeout', 'REQUEST_TIMEOUT', 'the request headers did not arrive in time'];
  return [400, 'Bad Request', 'BAD_REQUEST', 'the request is not valid HTTP'];
}

function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const response = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || response?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, reason, code, message] = clientErrorAnswer(err.code);
  const body = errorBody(code, message);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function createHttpServer(app: Koa, config: Config): Server {
  const server = createServer(
    {
      headersTimeout: config.headersTimeoutMs,
      // A body is bounded by its minimum rate (admission.ts), not by a total time.
      requestTimeout: 0,
      keepAliveTimeout: config.idleTimeoutMs,
      // How often Node checks the header timeout (its default is 30 s).
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(config.headersTimeoutMs / 4))),
    },
    new RequestStarts(app.callback()).listener,
  );
  server.maxConnections = config.maxConnections;
  server.timeout = config.socketTimeoutMs;
  server.on('clientError', answerClientError);
  return server;
}
