// Reopening a session from its log: records read a bounded piece at a time
// (LogReader) and applied one by one (applyChange) straight into the new
// session, the event loop given back between steps. An import is applied
// only once every part of it is known to be whole (a crash in the middle of
// writing one leaves a partial import at the end of the log, never
// acknowledged): the parts' headers and checksums are read first, then the
// parts applied as they are read again.
import type { Session } from '../session.js';
import { applyChange, type Change } from './change.js';
import { LogReader, type Held, type LogEnd } from './log-reader.js';
import { importPartAt } from './record-decoder.js';
import { CorruptLogError, FILE_HEADER_BYTES } from './records-v2.js';
import type { Slices } from '../../limits/slices.js';

export interface Replayed {
  /** Null when the log holds no whole record (a session whose creation failed, never acknowledged). */
  session: Session | null;
  end: LogEnd;
  /** The last record's sequence. */
  sequence: number;
}

/** `held`: told of the bytes each decoded record holds while it is applied (its rows, ids and metadata copied out of the reader). */
export async function replay(reader: LogReader, make: (sessionId: string, createdAt: number) => Session, slices: Slices, held?: Held): Promise<Replayed> {
  if (!(await reader.checkHeader())) return { session: null, end: { validBytes: 0, tornTail: null, cutRecords: 0 }, sequence: 0 };
  let session: Session | null = null;
  let sequence = 0;
  let reserved = false;
  let offset = FILE_HEADER_BYTES;
  let end: LogEnd | null = null;
  // What was acknowledged is replayed whatever limits were lowered since it was written (MAX_TEXT_BYTES, MAX_VECTORS_PER_SESSION); they apply again after.
  let limits: { maxTextBytes: number; maxVectors: number } | null = null;
  try {
    while (offset < reader.size) {
      let raw = await reader.recordAt(offset);
      if (!raw) {
        end = await reader.damageAt(offset);
        break;
      }
      if (raw.type === 'import' && importPartAt(raw.bytes, raw.at).part === 0) {
        const cut = await partialImport(reader, offset);
        if (cut) {
          end = cut;
          break;
        }
        raw = (await reader.recordAt(offset))!; // read again: the check moved the reader's window
      }
      // Views of the reader's window: the record is applied before the reader reads again.
      const record = LogReader.decode(raw, false);
      const recordBytes = raw.size;
      held?.grow(recordBytes);
      sequence = raw.sequence;
      offset += raw.size;
      if (!session) {
        if (record.t !== 'open') throw new CorruptLogError('the log does not start with an open record');
        session = make(record.sessionId, record.createdAt);
        limits = { maxTextBytes: session.index.maxTextBytes, maxVectors: session.index.maxVectors };
        session.index.maxTextBytes = Number.POSITIVE_INFINITY;
      } else if (record.t === 'open') {
        throw new CorruptLogError(`a second open record at byte ${offset - raw.size}`);
      } else if (record.t !== 'synced') {
        await applyChange(session, record as Change, slices);
      }
      held?.grow(-recordBytes);
      if (!reserved && session.index.initialized) {
        // Room for every row the log can hold, at once: growing step by step would copy the stored rows each time.
        session.index.reserve(Math.ceil(reader.size / (4 * session.index.getConfig().dimensions!)));
        reserved = true;
      }
      await slices.pause();
    }
  } catch (err) {
    session?.index.reset();
    throw err;
  } finally {
    if (session && limits) {
      session.index.maxTextBytes = limits.maxTextBytes;
      session.index.maxVectors = limits.maxVectors;
    }
  }
  return { session, end: end ?? { validBytes: offset, tornTail: null, cutRecords: 0 }, sequence };
}

/** The import starting at `offset`: null when all its parts are whole and in order; else where the log is cut (a crash while it was written). */
async function partialImport(reader: LogReader, offset: number): Promise<LogEnd | null> {
  for (let at = offset, expected = 0; ; expected++) {
    const raw = await reader.recordAt(at);
    if (raw?.type !== 'import') break;
    const { part, parts } = importPartAt(raw.bytes, raw.at);
    if (part !== expected) throw new CorruptLogError(`import part ${part} follows part ${expected - 1}`);
    if (part + 1 >= parts) return null;
    at += raw.size;
  }
  // A crash in the middle of writing an import: its parts were never acknowledged.
  const after = await reader.damageAt(offset);
  return { ...after, tornTail: `an import cut short at byte ${offset} (${reader.size - offset} bytes cut)` };
}
