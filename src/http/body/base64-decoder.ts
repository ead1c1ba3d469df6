// The windowed base64 decoder of vector-reader.ts: the kernel's SIMD decoder
// (assembly/base64.ts) in an instance with a fixed memory of its own, never
// shared with a session. It holds a window of the body's bytes (copied once
// per window) and a run of decoded floats copied to their target in one go
// (consecutive vectors back to back in one target array). The range check
// of the decoded floats happens in the same kernel call.
//
// A decoder serves one parse at a time (leaseBase64Decoder): that parse's
// values reach their arrays on flush(), before it gives the decoder back.
import { SPEC_LIMITS } from '../../config.js';
import { heapBaseOf, instantiateKernel, type KernelExports } from '../../kernel/kernel-module.js';
import { PAGE_BYTES } from '../../kernel/layout.js';
import { loadKernelModule } from '../../kernel/load-node.js';
import { base64Length } from '../../schemas/base64-float32.js';

/** Body bytes copied into the memory at once (at least one whole base64 vector of maxDimensions). */
const WINDOW_BYTES = 1 << 20;
/** Decoded floats held before they are copied to their target (at least one vector). */
const RUN_FLOATS = 1 << 18;

/** Bits of the largest float32 within ±maxAbsComponent (positive floats order as their bits). */
export const MAX_ABS_BITS = (() => {
  const max = SPEC_LIMITS.maxAbsComponent;
  const bits = new Int32Array(new Float32Array([max]).buffer)[0];
  return Math.fround(max) > max ? bits - 1 : bits;
})();

export class Base64Decoder {
  private readonly kernel: KernelExports;
  private readonly windowAt: number;
  private readonly runAt: number;
  private readonly bytes: Uint8Array;
  private readonly floats: Float32Array;

  /** The body whose bytes [windowStart, windowEnd) are in the memory at windowAt. */
  private body: Uint8Array | undefined;
  private windowStart = 0;
  private windowEnd = 0;

  /** The pending run: `runLength` floats at runAt, for target[runStart ...]. */
  private target: Float32Array | undefined;
  private runStart = 0;
  private runLength = 0;

  constructor(module: WebAssembly.Module) {
    this.windowAt = heapBaseOf(module);
    this.runAt = this.windowAt + WINDOW_BYTES;
    const pages = Math.ceil((this.runAt + RUN_FLOATS * 4) / PAGE_BYTES);
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
    this.kernel = instantiateKernel(module, memory);
    this.bytes = new Uint8Array(memory.buffer);
    this.floats = new Float32Array(memory.buffer);
  }

  /**
   * Forget the body (its buffer may be reused with other bytes) and any
   * unflushed run: before a body, and after it (flushed or declined) so that
   * neither the body nor a target is kept alive.
   */
  reset(): void {
    this.body = undefined;
    this.target = undefined;
    this.runLength = 0;
  }

  /**
   * Decode body[start, end) (base64 text, at most base64Length(maxDimensions)
   * characters) as float32 values for target[at ...]. Returns the number of
   * floats, or a negative number when the text is not padded base64 of whole
   * floats or a value is out of range (nothing is then written to target).
   * The values reach target at the latest on flush().
   */
  decode(body: Uint8Array, start: number, end: number, target: Float32Array, at: number): number {
    if (body !== this.body || start < this.windowStart || end > this.windowEnd) this.load(body, start);
    const room = end - start; // decodes to at most 3/4 of that in bytes, under a float per character
    if (target !== this.target || at !== this.runStart + this.runLength || this.runLength + room > RUN_FLOATS) {
      this.flush();
      this.target = target;
      this.runStart = at;
    }
    const src = this.windowAt + (start - this.windowStart);
    const count = this.kernel.decodeFloat32Base64(src, end - start, this.runAt + this.runLength * 4, MAX_ABS_BITS);
    if (count > 0) this.runLength += count;
    return count;
  }

  /** Copy the pending run to its target. */
  flush(): void {
    if (this.target && this.runLength > 0) {
      const first = this.runAt >> 2;
      this.target.set(this.floats.subarray(first, first + this.runLength), this.runStart);
    }
    this.target = undefined;
    this.runLength = 0;
  }

  private load(body: Uint8Array, start: number): void {
    const end = Math.min(body.length, start + WINDOW_BYTES);
    this.bytes.set(body.subarray(start, end), this.windowAt);
    this.body = body;
    this.windowStart = start;
    this.windowEnd = end;
  }
}

// A whole vector fits in a window and in a run.
if (base64Length(SPEC_LIMITS.maxDimensions) > WINDOW_BYTES || SPEC_LIMITS.maxDimensions > RUN_FLOATS) {
  throw new Error('base64-decoder: window or run smaller than one vector');
}

/** Decoders no parse holds, kept so that the next parse instantiates no kernel (most parses run one at a time). */
const idle: Base64Decoder[] = [];
const MAX_IDLE = 2;

/** A decoder for the caller alone, holding no body, until it gives it back with returnBase64Decoder. */
export function leaseBase64Decoder(): Base64Decoder {
  return idle.pop() ?? new Base64Decoder(loadKernelModule());
}

/** Give back a leased decoder: unflushed values are dropped, and neither the body nor a target is kept alive. */
export function returnBase64Decoder(decoder: Base64Decoder): void {
  decoder.reset();
  if (idle.length < MAX_IDLE) idle.push(decoder);
}
