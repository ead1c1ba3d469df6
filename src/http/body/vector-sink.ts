// Where the vector body reader puts a body's vectors: checked Float32Arrays
// carved from a few shared blocks (taken from the request's BufferLease),
// or decoded in place in the WasmBodyBuffer the body sits in. A number
// array is read into `components` first; base64 text goes to the kernel's
// decoder, leased while the parse runs and given back (flushed) whenever
// the parse pauses or ends, so no other parse ever sees its pending values.
import { endianness } from 'node:os';
import { base64Length } from '../../schemas/base64-float32.js';
import { type Base64Decoder, leaseBase64Decoder, returnBase64Decoder } from './base64-decoder.js';
import { DECLINE } from './json-scanner.js';
import type { BufferLease } from './spare-buffers.js';
import type { WasmBodyBuffer } from './wasm-body-buffer.js';

const LITTLE_ENDIAN = endianness() === 'LE';
const EQUALS = 0x3d;

/** Floats per arena block: vectors of a body are views into a few shared blocks, not one buffer each. */
const ARENA_FLOATS = 64 * 1024;

export class VectorSink {
  private arena = new Float32Array(0);
  private arenaUsed = 0;
  /** One vector's components while they are read: this parse's own, made on its first number array. */
  private scratch: Float32Array | undefined;
  /** Leased on the first base64 vector of a run of the parse, given back by settle() or abandon(). */
  private decoder: Base64Decoder | undefined;
  /** The WasmBodyBuffer the body was read into, if any: its base64 vectors are decoded in place. */
  private readonly wasmBuffer: WasmBodyBuffer | undefined;

  constructor(
    private readonly bytes: Buffer,
    private readonly lease: BufferLease | undefined,
    wasmBuffer: WasmBodyBuffer | undefined,
    readonly maxDimensions: number,
  ) {
    this.wasmBuffer = wasmBuffer?.holds(bytes) ? wasmBuffer : undefined;
  }

  /** Room for one vector's components; take() copies the first n out. */
  get components(): Float32Array {
    this.scratch ??= new Float32Array(this.maxDimensions);
    return this.scratch;
  }

  /** The first n components as a vector of its own; `from`: the body position after the array. */
  take(n: number, from: number): Float32Array {
    const values = this.allocate(n, from, false);
    values.set(this.components.subarray(0, n));
    return values;
  }

  /**
   * The base64 text bytes[start, end) decoded into a vector. Accepted only
   * when every character decodes (so the JSON string holds no escape or
   * control character and equals its bytes) and the values pass the vector
   * schema; else DECLINE. The values are in place once settle() is called.
   */
  base64(start: number, end: number): Float32Array {
    const { bytes } = this;
    if (!LITTLE_ENDIAN) throw DECLINE;
    const length = end - start;
    if (length % 4 !== 0 || length > base64Length(this.maxDimensions) || bytes[end - 3] === EQUALS) throw DECLINE;
    const expected = (length / 4) * 3 - (bytes[end - 1] === EQUALS ? (bytes[end - 2] === EQUALS ? 2 : 1) : 0);
    if (expected % 4 !== 0) throw DECLINE;
    if (expected === 0 || expected > this.maxDimensions * 4) throw DECLINE;
    // In place when the body sits in a WasmBodyBuffer (wasm-body-buffer.ts) with room left.
    const placed = this.wasmBuffer?.decode(start, end) ?? null;
    if (placed !== null) {
      // A number: a character outside the alphabet, padding inside the text or a value out of range.
      if (typeof placed === 'number' || placed.length !== expected / 4) throw DECLINE;
      return placed;
    }
    const values = this.allocate(expected / 4, start - 1, true);
    this.decoder ??= leaseBase64Decoder();
    // Negative for a character outside the alphabet, padding inside the text or a value out of range.
    if (this.decoder.decode(bytes, start, end, this.arena, this.arenaUsed - values.length) !== values.length) throw DECLINE;
    return values;
  }

  /** Every decoded value in its vector, and the decoder given back: before the parse pauses, and when it ends. */
  settle(): void {
    if (!this.decoder) return;
    this.decoder.flush();
    returnBase64Decoder(this.decoder);
    this.decoder = undefined;
  }

  /** The decoder given back with nothing written: when the parse declines or throws. */
  abandon(): void {
    if (!this.decoder) return;
    returnBase64Decoder(this.decoder);
    this.decoder = undefined;
  }

  /** A vector of n floats carved from the current arena block; `from` is the body position the block is sized from. */
  private allocate(n: number, from: number, base64: boolean): Float32Array {
    if (this.arenaUsed + n > this.arena.length) {
      const left = this.bytes.length - from;
      // A JSON component takes at least 2 bytes of the body ("0,"), so a
      // small body gets a small block. Base64 takes 16 bytes per 3 floats:
      // one block holds every base64 vector left (at most 0.75 bytes per
      // body byte), so a batch is one allocation, not one per 256 KB.
      const size = base64 ? Math.floor((left * 3) / 16) : Math.min(ARENA_FLOATS, left >> 1);
      const floats = Math.max(n, size);
      const buffer = this.lease ? this.lease.take(floats * 4) : new ArrayBuffer(floats * 4);
      this.arena = new Float32Array(buffer, 0, floats);
      this.arenaUsed = 0;
    }
    const values = this.arena.subarray(this.arenaUsed, this.arenaUsed + n);
    this.arenaUsed += n;
    return values;
  }
}
