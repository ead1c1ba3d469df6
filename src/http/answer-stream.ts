// Large answers, written in pieces. An answer that may be large (search-many,
// get-many, list) is never held whole as one string: a Readable makes its
// JSON a piece of about PIECE_BYTES at a time, only when the socket has taken
// the previous ones (back-pressure), so a 50 MB answer holds about two pieces
// at once and blocks the event loop for one piece (well under a millisecond
// to a few ms) at a time. The text is exactly JSON.stringify's; stored
// metadata (MetadataJson) is written as the text the index keeps, unparsed.
//
// A socket that takes every piece at once (a fast client on loopback) would
// have the stream make the whole answer in one turn of the event loop: all
// answer streams together make pieces for at most TURN_MS per turn, then wait
// for the next one.
import { Readable } from 'node:stream';
import { MetadataJson } from '../index/metadata/metadata-json.js';
import { TurnClock } from '../limits/turn-clock.js';

/** Text made per read of the stream (and the stream's buffer). */
export const PIECE_BYTES = 64 * 1024;

/** Answers estimated at this many bytes or more are streamed; smaller ones are sent as one string. */
export const STREAM_FROM = 64 * 1024;

/**
 * Bytes a streamed answer holds while it is sent, counted in the memory
 * budget: the stream's buffer, the socket's, the piece being made, and room
 * for the objects of the answer it walks.
 */
export const ANSWER_WINDOW_BYTES = 4 * PIECE_BYTES;

/** Milliseconds of piece-making per turn of the event loop, across all answer streams. */
export const TURN_MS = 8;

/** Piece-making of all answer streams in this turn. */
const turn = new TurnClock();

/** Whether this turn has made pieces for TURN_MS; counts a piece about to be made. */
const turnUsedUp = () => turn.elapsed() >= TURN_MS;

/** Containers this deep (the envelope's fields are 0) are stringified whole: a hit, a stored vector's values, a metadata object. */
const WHOLE_FROM_DEPTH = 3;

const isPlainObject = (value: object) => {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/** A piece of an answer: text, or stored metadata's UTF-8 JSON bytes, written as they are. */
export type AnswerPiece = string | Uint8Array;

/**
 * JSON.stringify(value) in pieces: containers near the top are walked,
 * deeper ones stringified whole, except that stored metadata (MetadataJson)
 * is always its own piece of bytes: a hit deeper down is its text up to its
 * metadata, the metadata's bytes, and the rest.
 */
export function* jsonPieces(value: unknown, depth = 0): Generator<AnswerPiece> {
  if (value instanceof MetadataJson) {
    yield value.bytes;
    return;
  }
  if (value === null || typeof value !== 'object') {
    yield JSON.stringify(value) ?? 'null';
    return;
  }
  if (Array.isArray(value)) {
    // Numbers (a vector's values), ids, or anything deep: no stored metadata inside, one stringify.
    if (depth >= WHOLE_FROM_DEPTH || value.length === 0 || typeof value[0] !== 'object') {
      yield JSON.stringify(value);
      return;
    }
    yield '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) yield ',';
      const item = value[i];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') yield 'null';
      else yield* jsonPieces(item, depth + 1);
    }
    yield ']';
    return;
  }
  if (!isPlainObject(value) || (depth >= WHOLE_FROM_DEPTH && !holdsMetadataJson(value))) {
    yield JSON.stringify(value);
    return;
  }
  let text = '{';
  let first = true;
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    text += (first ? '' : ',') + JSON.stringify(key) + ':';
    first = false;
    if (depth >= WHOLE_FROM_DEPTH && !(item instanceof MetadataJson)) {
      text += JSON.stringify(item);
      continue;
    }
    yield text;
    text = '';
    yield* jsonPieces(item, depth + 1);
  }
  yield text + '}';
}

/**
 * Whether stored metadata (MetadataJson) may be anywhere in `value` (arrays of scalars are passed over, as
 * jsonPieces stringifies them whole): without any, JSON.stringify makes the same text at once (a search's
 * ten hits through jsonPieces took 9 us of a 1k x 384 /search).
 */
export function holdsStoredMetadata(value: unknown): boolean {
  if (value instanceof MetadataJson) return true;
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    if (value.length === 0 || typeof value[0] !== 'object') return false;
    for (const item of value) if (holdsStoredMetadata(item)) return true;
    return false;
  }
  if (!isPlainObject(value)) return false;
  for (const key in value) if (holdsStoredMetadata((value as Record<string, unknown>)[key])) return true;
  return false;
}

function holdsMetadataJson(object: object): boolean {
  for (const key in object) if ((object as Record<string, unknown>)[key] instanceof MetadataJson) return true;
  return false;
}

/**
 * A stream of `head`, the members of `fields` (each after a comma), then
 * `tail()` (made when everything before it is written: the metrics, timed to
 * the answer's end, and the closing brace). `onClose` runs once the stream
 * ends or is destroyed (the client went away).
 */
export function answerStream(head: string, fields: Record<string, unknown>, tail: () => string, onClose: () => void): Readable {
  const pieces = membersOf(fields);
  let text = head;
  let done = false;
  const stream: Readable = new Readable({
    highWaterMark: PIECE_BYTES,
    read() {
      if (done) return;
      // Queued after the turn's reset, so it starts the next turn's time.
      if (turnUsedUp()) setImmediate(pushPiece);
      else pushPiece();
    },
  });
  /** Make the next piece (about PIECE_BYTES: text, and stored metadata's bytes as they are) and push it; the end after the last. */
  function pushPiece() {
    if (done || stream.destroyed) return;
    const parts: Uint8Array[] = [];
    let size = 0;
    while (size + text.length < PIECE_BYTES) {
      const next = pieces.next();
      if (next.done) {
        text += tail();
        done = true;
        break;
      }
      if (typeof next.value === 'string') {
        text += next.value;
        continue;
      }
      if (text !== '') {
        const bytes = Buffer.from(text, 'utf8');
        parts.push(bytes);
        size += bytes.length;
        text = '';
      }
      parts.push(next.value);
      size += next.value.length;
    }
    if (text !== '') {
      const bytes = Buffer.from(text, 'utf8');
      parts.push(bytes);
      size += bytes.length;
      text = '';
    }
    stream.push(Buffer.concat(parts, size));
    if (done) stream.push(null);
  }
  stream.once('close', onClose);
  return stream;
}

/** The members of an object's JSON, each after a comma (they follow the envelope's head). */
function* membersOf(fields: Record<string, unknown>): Generator<AnswerPiece> {
  for (const key of Object.keys(fields)) {
    const item = fields[key];
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    yield ',' + JSON.stringify(key) + ':';
    yield* jsonPieces(item, 1);
  }
}
