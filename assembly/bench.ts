// The bench build of the kernel (build/kernel.bench.wasm, asc target
// "bench"): the product's exports, plus the probes only benchmarks use:
// the bare dot-product metric and the memory read floors.
export * from "./index";
export { METRIC_DOT } from "./scan";
export { readFloor, readFloor4 } from "./probes";
