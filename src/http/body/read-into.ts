// A body of announced length read into one buffer given by the caller (a
// pooled one) as the chunks arrive; a body of unknown length as a list of
// chunks. Each chunk is reported as it arrives (the memory budget holds it). raw-body keeps a list of chunks and
// concatenates them into a fresh buffer at the end: a copy, and page faults
// of a new buffer, that this avoids.
//
// It ends exactly as raw-body does (same listeners, same `type` and message
// on each failure), so the caller maps both alike.
import type { Readable } from 'node:stream';

export interface ReadFailure extends Error {
  status: number;
  type: string;
}

function failure(status: number, message: string, type: string): ReadFailure {
  return Object.assign(new Error(message), { status, type });
}

/** Called with each chunk's length as it arrives; a throw stops the read and rejects with what it threw. */
export type OnChunk = (bytes: number) => void;

/**
 * The `length` bytes of `stream`, copied into `target` (at least `length`
 * bytes); the result is a view of `target`. Rejects with 'entity.too.large'
 * once more than `limit` bytes arrived, 'request.size.invalid' when the body
 * ends at another length than announced, 'request.aborted' when the client
 * goes away, or the stream's own error.
 */
export function readInto(stream: Readable, length: number, limit: number, target: Buffer, onChunk?: OnChunk): Promise<Buffer> {
  if (target.length < length) throw new RangeError('the target is shorter than the body');
  return readStream(
    stream,
    limit,
    // Bytes past the announced length are counted (the end reports the mismatch), not stored.
    (chunk, at) => {
      if (at + chunk.length <= length) chunk.copy(target, at);
    },
    (received) => (received === length ? target.subarray(0, length) : failure(400, 'request size did not match content length', 'request.size.invalid')),
    onChunk,
  );
}

/** A body of unknown length (chunked): its chunks kept as they arrive, joined at the end; fails as readInto does. */
export function readChunks(stream: Readable, limit: number, onChunk?: OnChunk): Promise<Buffer> {
  const chunks: Buffer[] = [];
  return readStream(
    stream,
    limit,
    (chunk) => chunks.push(chunk),
    (received) => Buffer.concat(chunks, received),
    onChunk,
  );
}

/** Where a growing buffer starts (a few chunks): what a body that trickles makes the process allocate. */
const GROW_FROM = 64 * 1024;

/**
 * The `length` bytes of `stream` in a buffer that grows with what arrived
 * (doubling, at most `length`), never `length` up front: a body that trickles
 * makes the process allocate about what it sent, not its announced length
 * (256 slow bodies announcing 32 MiB were 8 GiB of external memory, and the
 * garbage collections that drove stalled the event loop for 300-800 ms).
 * `hold` hears each new capacity before it is allocated (the memory budget
 * counts it; a throw ends the read). Fails as readInto does.
 */
export function readGrowing(stream: Readable, length: number, limit: number, onChunk?: OnChunk, hold?: OnChunk): Promise<Buffer> {
  let target = Buffer.allocUnsafeSlow(Math.min(length, GROW_FROM));
  return readStream(
    stream,
    limit,
    (chunk, at) => {
      const end = Math.min(length, at + chunk.length);
      if (end > target.length) {
        const capacity = Math.min(length, Math.max(2 * target.length, end));
        hold?.(capacity);
        const grown = Buffer.allocUnsafeSlow(capacity);
        target.copy(grown, 0, 0, at);
        target = grown;
      }
      // Bytes past the announced length are counted (the end reports the mismatch), not stored.
      if (at < length) chunk.copy(target, at, 0, end - at);
    },
    (received) => (received === length ? target.subarray(0, length) : failure(400, 'request size did not match content length', 'request.size.invalid')),
    onChunk,
  );
}

function readStream(
  stream: Readable,
  limit: number,
  keep: (chunk: Buffer, at: number) => void,
  done: (received: number) => Buffer | ReadFailure,
  onChunk: OnChunk | undefined,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let received = 0;
    let complete = false;

    const cleanup = () => {
      stream.removeListener('aborted', onAborted);
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.removeListener('error', onEnd);
      stream.removeListener('close', cleanup);
    };
    const fail = (err: Error) => {
      complete = true;
      cleanup();
      // Halt the stream, as raw-body does.
      stream.unpipe();
      stream.pause();
      reject(err);
    };
    function onAborted() {
      if (!complete) fail(failure(400, 'request aborted', 'request.aborted'));
    }
    function onData(chunk: Buffer) {
      if (complete) return;
      const at = received;
      received += chunk.length;
      if (received > limit) return fail(failure(413, 'request entity too large', 'entity.too.large'));
      try {
        onChunk?.(chunk.length);
        keep(chunk, at);
      } catch (err) {
        return fail(err as Error);
      }
    }
    function onEnd(err?: Error) {
      if (complete) return;
      if (err) return fail(err);
      const result = done(received);
      if (!Buffer.isBuffer(result)) return fail(result);
      complete = true;
      cleanup();
      resolve(result);
    }

    stream.on('aborted', onAborted);
    stream.on('close', cleanup);
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onEnd);
  });
}
