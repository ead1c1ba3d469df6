// An export as a stream: the header line, then the records of an open
// IndexExport a batch at a time, pulled by the socket (back-pressure: a slow
// reader holds a few pieces, not the session) and yielding to the event loop
// between batches, so other sessions' requests are answered meanwhile. A
// batch's text is given out in pieces of about PIECE_CHARS, whatever its
// metadata weighs, so what an export holds stays within EXPORT_WINDOW_BYTES.
import { Readable } from 'node:stream';
import type { IndexExport } from '../index/types.js';
import { exportHeader, headerLine, recordLine, type VectorEncoding } from './format.js';

/**
 * Vector components per batch read from the index: base64 costs little per
 * value, numbers (JSON.stringify of doubles) ~1 us each, so a batch of them
 * is kept smaller and no batch holds the event loop for more than a few milliseconds.
 */
const BATCH_VALUES: Record<VectorEncoding, number> = { base64: 32 * 1024, numbers: 4 * 1024 };

/** Text given to the stream at once (a piece ends with the line that reaches it). */
export const PIECE_CHARS = 64 * 1024;

/** The stream's buffer: it pulls more pieces while it holds less. */
const BUFFER_BYTES = 256 * 1024;

/**
 * What an export holds while it is sent, counted in the memory budget like
 * other streamed answers: the stream's buffer and the piece that passes it,
 * the piece being made (UTF-8: up to 3 bytes a character), and one batch's
 * float32 vectors read from the index.
 */
export const EXPORT_WINDOW_BYTES = BUFFER_BYTES + 2 * 3 * PIECE_CHARS + 4 * BATCH_VALUES.base64;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The export's text in pieces; closes `exp` at the end, or when the stream is destroyed (the client went away). */
export async function* exportPieces(exp: IndexExport, encoding: VectorEncoding): AsyncGenerator<string> {
  try {
    yield headerLine(exportHeader(exp.config, exp.count));
    const batch = Math.max(1, Math.floor(BATCH_VALUES[encoding] / (exp.config.dimensions ?? 1)));
    for (let records = exp.next(batch); records.length > 0; records = exp.next(batch)) {
      let text = '';
      for (const record of records) {
        text += recordLine(record, encoding);
        if (text.length >= PIECE_CHARS) {
          yield text;
          text = '';
        }
      }
      if (text !== '') yield text;
      await nextTurn();
    }
  } finally {
    exp.close();
  }
}

/** A Readable of exportPieces(); `onClose` runs once when it ends or is destroyed. */
export function exportStream(exp: IndexExport, encoding: VectorEncoding, onClose: () => void): Readable {
  const stream = Readable.from(exportPieces(exp, encoding), { objectMode: false, highWaterMark: BUFFER_BYTES });
  stream.once('close', onClose);
  return stream;
}
