// WebAssembly memories outside sessions. V8 reserves about 10 GiB of address
// space per memory and could reserve 13,090 in one process on this machine,
// so every memory is counted against MAX_WASM_MEMORIES.

/** WebAssembly body buffers that may exist at once (src/http/body/wasm-body-buffer.ts); more bodies use ordinary buffers. */
export const MAX_WASM_BODY_BUFFERS = 4;

/** At most: the body buffers, the base64 decoder's memory and the kernel module's probe. */
export const WASM_MEMORIES_OUTSIDE_SESSIONS = MAX_WASM_BODY_BUFFERS + 2;

/** `new WebAssembly.Memory` or `memory.grow` found no memory or address space left (a RangeError from V8). */
export function isWasmAllocationFailure(err: unknown): boolean {
  return err instanceof RangeError && /WebAssembly|memory/i.test(err.message);
}
