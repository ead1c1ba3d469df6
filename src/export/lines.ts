// Splits a byte stream into UTF-8 lines (LF, or CRLF), across chunk
// boundaries, for reading NDJSON as it arrives. Environment-free.
import { apiError, pointer } from '../errors.js';

export class LineSplitter {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private lastByte = 0;
  /** 0-based number of the next line. */
  private lineIndex = 0;

  /** `maxLineBytes`: a longer line (its CR and LF aside) is refused as soon as its bytes pass it, never held whole. */
  constructor(
    private readonly onLine: (text: string, index: number, bytes: Uint8Array) => void,
    private readonly maxLineBytes = Infinity,
  ) {}

  push(chunk: Uint8Array): void {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      this.hold(chunk.subarray(start, nl), false);
      this.emit();
      start = nl + 1;
    }
    // Copied (once within the limit): the caller may reuse its chunk.
    if (start < chunk.length) this.hold(chunk.subarray(start), true);
  }

  /** Add `part` to the line being read, within maxLineBytes (a last CR aside: it goes if an LF follows, and else counts with what follows). */
  private hold(part: Uint8Array, copy: boolean): void {
    this.pendingBytes += part.length;
    if (part.length > 0) this.lastByte = part[part.length - 1];
    if (this.pendingBytes - (this.lastByte === CR ? 1 : 0) > this.maxLineBytes) throw lineTooLarge(this.lineIndex, this.maxLineBytes);
    this.pending.push(copy ? part.slice() : part);
  }

  /** The end of the stream: a last line without a newline counts too. */
  end(): void {
    if (this.pending.length > 0) this.emit();
  }

  private emit(): void {
    const parts = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    this.lastByte = 0;
    const bytes = parts.length === 1 ? parts[0] : concat(parts);
    let text: string;
    try {
      text = this.decoder.decode(bytes);
    } catch {
      throw apiError('INVALID_JSON', `line ${this.lineIndex + 1} is not UTF-8`, { path: pointer(this.lineIndex), line: this.lineIndex + 1 });
    }
    const index = this.lineIndex++;
    if (text.endsWith('\r')) text = text.slice(0, -1);
    this.onLine(text, index, bytes);
  }
}

/** 413 IMPORT_LINE_TOO_LARGE: line `index` passed `limit` bytes (MAX_BODY_BYTES, what any JSON body may be). */
const CR = 13;

function lineTooLarge(index: number, limit: number) {
  return apiError(
    'IMPORT_LINE_TOO_LARGE',
    `line ${index + 1} is longer than ${limit} bytes (MAX_BODY_BYTES, the most any JSON body may be); nothing was imported`,
    {
      path: pointer(index),
      line: index + 1,
      limit,
    },
  );
}

function concat(parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
