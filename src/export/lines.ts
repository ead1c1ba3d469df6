// Splits a byte stream into UTF-8 lines (LF, or CRLF), across chunk
// boundaries, for reading NDJSON as it arrives. Environment-free.
import { apiError, pointer } from '../errors.js';

export class LineSplitter {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private pending: Uint8Array[] = [];
  /** 0-based number of the next line. */
  private lineIndex = 0;

  constructor(private readonly onLine: (text: string, index: number) => void) {}

  push(chunk: Uint8Array): void {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      this.pending.push(chunk.subarray(start, nl));
      this.emit();
      start = nl + 1;
    }
    // Copied: the caller may reuse its chunk.
    if (start < chunk.length) this.pending.push(chunk.slice(start));
  }

  /** The end of the stream: a last line without a newline counts too. */
  end(): void {
    if (this.pending.length > 0) this.emit();
  }

  private emit(): void {
    const parts = this.pending;
    this.pending = [];
    const bytes = parts.length === 1 ? parts[0] : concat(parts);
    let text: string;
    try {
      text = this.decoder.decode(bytes);
    } catch {
      throw apiError('INVALID_JSON', `line ${this.lineIndex + 1} is not UTF-8`, { path: pointer(this.lineIndex), line: this.lineIndex + 1 });
    }
    const index = this.lineIndex++;
    if (text.endsWith('\r')) text = text.slice(0, -1);
    this.onLine(text, index);
  }
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
