// A KernelInstance filled with packed data, as the service would hold it.
import type { Metric, VectorType } from '../../src/config.js';
import { KernelInstance } from '../../src/kernel/kernel-instance.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { rowOf } from './data.js';

/** `module`: the shared build (loadSharedKernelModule) for an instance that runs on a KernelPool. */
export function filledKernel(data: Float32Array, dim: number, metric: Metric, vectorType: VectorType = 'float32', module = loadKernelModule()): KernelInstance {
  const count = data.length / dim;
  const kernel = new KernelInstance(module, dim, metric, count, vectorType);
  kernel.ensureCapacity(count);
  for (let r = 0; r < count; r++) kernel.writeRows([r], [rowOf(data, dim, r)], r);
  return kernel;
}
