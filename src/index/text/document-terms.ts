// Each document's distinct term ids, so dropping a document walks its own
// terms instead of analysing its text again (13 ms for 32 KiB of Cyrillic,
// inside the write's turn). A document's ids are sorted and written as
// varint gaps into one byte arena, one after another in document order, so
// a term costs about one byte (four as a plain Uint32). Dropped documents'
// bytes stay until compact() copies the live ones' (each as it is) into a
// new arena (compactedSteps: in steps, into a new DocumentTerms).

import { grown } from '../metadata/typed-arrays.js';
import { runSteps } from '../../limits/steps.js';

export class DocumentTerms {
  private bytes = new Uint8Array(1024);
  private top = 0;
  /** Per document: where its ids end in `bytes` (they start where the previous document's end). */
  private endOf = new Uint32Array(16);
  /** Documents written. */
  private count = 0;

  /** Bytes of the typed arrays held. */
  get byteLength(): number {
    return this.bytes.byteLength + this.endOf.byteLength;
  }

  /** Bytes written, the dropped documents' included. */
  get usedBytes(): number {
    return this.top;
  }

  /** Write the ids of document `doc` (the next one: documents come in order): `ids[0, length)`, distinct, sorted here in place. */
  add(doc: number, ids: Int32Array, length: number): void {
    if (doc !== this.count) throw new Error(`document ${doc} written after ${this.count - 1}`);
    const sorted = ids.subarray(0, length).sort();
    // At most 5 bytes a varint of 32 bits.
    this.bytes = grown(this.bytes, this.top + 5 * length);
    let at = this.top,
      previous = 0;
    for (let i = 0; i < length; i++) {
      let gap = sorted[i] - previous;
      previous = sorted[i];
      while (gap >= 0x80) {
        this.bytes[at++] = (gap & 0x7f) | 0x80;
        gap >>>= 7;
      }
      this.bytes[at++] = gap;
    }
    this.top = at;
    this.endOf = grown(this.endOf, doc + 1);
    this.endOf[doc] = at;
    this.count++;
  }

  /** The ids of document `doc` into `out` (grown when short: the array returned holds them); how many in `read`. */
  read<T extends Int32Array>(doc: number, out: T): { ids: T; read: number } {
    const bytes = this.bytes,
      end = this.endOf[doc];
    let ids = out,
      n = 0,
      id = 0,
      value = 0,
      shift = 0;
    for (let at = doc === 0 ? 0 : this.endOf[doc - 1]; at < end; at++) {
      const byte = bytes[at];
      value |= (byte & 0x7f) << shift;
      shift += 7;
      if (byte >= 0x80) continue;
      id += value >>> 0;
      if (n === ids.length) ids = grown(ids, n + 1);
      ids[n++] = id;
      value = 0;
      shift = 0;
    }
    return { ids, read: n };
  }

  /** Keep only the documents `renumbered` maps to a number (>= 0; in the same order), as those numbers. */
  compact(renumbered: Int32Array): void {
    Object.assign(this, runSteps(this.compactedSteps(renumbered, Infinity)));
  }

  /** compact()'s result as new arrays (this one left as it is), a pause after every `step` documents copied. */
  *compactedSteps(renumbered: Int32Array, step: number): Generator<void, DocumentTerms, void> {
    let live = 0,
      liveBytes = 0;
    for (let doc = 0; doc < this.count; doc++) {
      if (renumbered[doc] < 0) continue;
      live++;
      liveBytes += this.endOf[doc] - (doc === 0 ? 0 : this.endOf[doc - 1]);
    }
    const out = new DocumentTerms();
    out.bytes = new Uint8Array(Math.max(1024, liveBytes));
    out.endOf = new Uint32Array(Math.max(16, live));
    let at = 0;
    for (let doc = 0; doc < this.count; doc++) {
      const to = renumbered[doc];
      if (to >= 0) {
        const start = doc === 0 ? 0 : this.endOf[doc - 1];
        out.bytes.set(this.bytes.subarray(start, this.endOf[doc]), at);
        at += this.endOf[doc] - start;
        out.endOf[to] = at;
      }
      if ((doc + 1) % step === 0) yield;
    }
    out.top = at;
    out.count = live;
    return out;
  }
}
