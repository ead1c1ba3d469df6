// A large vector body read straight into a WebAssembly memory of its own,
// with room after it for the floats its base64 vectors decode to, and a
// kernel instance over that memory: each base64 vector decodes in place and
// its Float32Array is a view of that place. Vectors that do not fit, and all
// other bodies, go through the windowed decoder (base64-decoder.ts).
//
// Pooled like the other body buffers (spare-buffers.ts): the memory never
// grows, so its buffer and views stay valid, and it is reused only once the
// request that read a body into it is done.
import { heapBaseOf, instantiateKernel, type KernelExports } from '../../kernel/kernel-module.js';
import { align16, PAGE_BYTES } from '../../kernel/layout.js';
import { MAX_ABS_BITS } from './base64-decoder.js';

/** Floats the base64 in a body of `length` bytes can decode to, at most: 3 bytes per 4 characters. */
const maxFloatsIn = (length: number) => Math.floor((length * 3) / 16);

export class WasmBodyBuffer {
  readonly memory: WebAssembly.Memory;
  /** The memory's buffer (it never grows, so this stays the one; the getter costs a call per vector). */
  private readonly buffer: ArrayBuffer;
  private readonly kernel: KernelExports;
  /** Where the body starts (after the kernel's static data). */
  private readonly base: number;
  /** Bytes past `base`: the largest body plus floats it can take. */
  readonly byteLength: number;

  /** Room for the current body's floats: [next, floatsEnd). */
  private next = 0;
  private floatsEnd = 0;

  constructor(module: WebAssembly.Module, byteLength: number) {
    this.base = heapBaseOf(module);
    this.byteLength = byteLength;
    const pages = Math.ceil((this.base + byteLength) / PAGE_BYTES);
    this.memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
    this.buffer = this.memory.buffer;
    this.kernel = instantiateKernel(module, this.memory);
  }

  /** The bytes a WasmBodyBuffer needs for a body of `length` bytes and every float its base64 can hold. */
  static bytesFor(length: number): number {
    return align16(length) + maxFloatsIn(length) * 4;
  }

  /** The view to read a body of `length` bytes into (at most what bytesFor allows); forgets the previous body's floats. */
  open(length: number): Buffer {
    if (length > this.byteLength) throw new RangeError(`a body of ${length} bytes does not fit a buffer of ${this.byteLength}`);
    this.floatsEnd = this.base + this.byteLength;
    this.next = Math.min(this.base + align16(length), this.floatsEnd);
    return Buffer.from(this.buffer, this.base, length);
  }

  /** Whether `bytes` is the body this buffer holds (a view made by open()). */
  holds(bytes: Uint8Array): boolean {
    return bytes.buffer === this.buffer && bytes.byteOffset === this.base;
  }

  /**
   * The base64 text body[start, end) decoded in place: a Float32Array in
   * this memory, after the floats decoded before it. Null when it does not
   * fit (the caller decodes it elsewhere); a negative number when the text is
   * not padded base64 of whole floats or a value is out of range
   * (decodeFloat32Base64's codes).
   */
  decode(start: number, end: number): Float32Array | number | null {
    const at = this.next;
    // The decoder writes at most 3 bytes per 4 characters, also for text it then refuses.
    if (at + Math.ceil(((end - start) * 3) / 4) > this.floatsEnd) return null;
    const count = this.kernel.decodeFloat32Base64(this.base + start, end - start, at, MAX_ABS_BITS);
    if (count <= 0) return count;
    this.next = at + count * 4;
    return new Float32Array(this.buffer, at, count);
  }
}
