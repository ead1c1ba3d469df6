// A kernel pool thread: instantiates the shared kernel build over each
// instance's memory it is sent (once), and runs the jobs it is given: kernel
// calls in order, in the work area the main thread set aside for the job.
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { instantiateKernel, type KernelExports } from './kernel-module.js';
import { runKernelCall, type KernelCall } from './search-path.js';

export interface WorkerRequest {
  instance: number;
  /** Sent with an instance's first job on this thread. */
  memory?: WebAssembly.Memory;
  workArea: number;
  calls: KernelCall[];
}

/**
 * The nice value of a pool thread (Linux keeps one per thread): when scans
 * and the event loop want the same core, the event loop wins, so requests
 * that need no scan are not slowed by others' scans; an idle core still
 * runs a scan at full speed.
 */
const KERNEL_THREAD_NICE = 5;

try {
  setPriority(0, KERNEL_THREAD_NICE);
} catch {
  // Not allowed here (another OS, a sandbox): the thread runs at normal priority.
}

const module = (workerData as { module: WebAssembly.Module }).module;
const kernels = new Map<number, KernelExports>();

parentPort!.on('message', (message: WorkerRequest | { release: number }) => {
  if ('release' in message) {
    kernels.delete(message.release);
    return;
  }
  const { instance, memory, workArea, calls } = message;
  let kernel = kernels.get(instance);
  if (!kernel) {
    kernel = instantiateKernel(module, memory!);
    kernels.set(instance, kernel);
  }
  kernel.setWorkArea(workArea);
  const results = calls.map((call) => runKernelCall(kernel, call));
  parentPort!.postMessage({ results });
});

// Loaded and listening: a thread that dies before this could not start.
parentPort!.postMessage({ ready: true });
