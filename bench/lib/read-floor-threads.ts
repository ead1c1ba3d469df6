// The memory floor on several threads: each worker holds its own share of
// `bytes` in a memory of its own (the bench kernel's readFloor, SIMD loads
// only) and all read at once; the wall time of a read of all `bytes`. What
// a scan split over threads could at best do on this machine today.
import { Worker } from 'node:worker_threads';
import { loadBenchKernelModule } from './bench-kernel.js';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { module, bytes } = workerData;
const memory = new WebAssembly.Memory({ initial: Math.ceil((bytes + 65536) / 65536) + 1 });
const kernel = new WebAssembly.Instance(module, { env: { memory } }).exports;
const start = Math.ceil(kernel.heapBase() / 64) * 64;
new Uint8Array(memory.buffer, start, bytes).fill(1);
parentPort.on('message', (reps) => { for (let i = 0; i < reps; i++) kernel.readFloor(start, bytes); parentPort.postMessage(0); });
parentPort.postMessage(0);
`;

/** Milliseconds a read of `bytes` split over `threads` workers takes (median of `rounds`, `reps` reads each). */
export async function readFloorOnThreads(threads: number, bytes: number, rounds = 7, reps = 10): Promise<number> {
  const share = Math.floor(bytes / threads / 64) * 64;
  const module = loadBenchKernelModule();
  const workers = Array.from({ length: threads }, () => new Worker(WORKER, { eval: true, workerData: { module, bytes: share } }));
  const all = () => Promise.all(workers.map((w) => new Promise((resolve) => w.once('message', resolve))));
  await all();
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const done = all();
    const t0 = performance.now();
    for (const w of workers) w.postMessage(reps);
    await done;
    times.push((performance.now() - t0) / reps);
  }
  await Promise.all(workers.map((w) => w.terminate()));
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}
