// Defaults that depend on the machine: memory, threads, free disk space.
// This module also runs in browsers (the SDK's local index), so node:
// built-ins are reached without importing them.

/** Share of the free space at start that DATA_DIR_MAX_BYTES leaves to the logs by default (the rest: compactions' temporary files, other users). */
const DATA_DIR_FREE_SHARE = 0.9;

/**
 * DATA_DIR_MAX_BYTES by default: the bytes of the files already in `dir`
 * plus 90% of its file system's free space (that of its nearest existing
 * ancestor when it is not made yet); 0 (no quota) where that cannot be read.
 */
export function defaultDataDirMaxBytes(dir: string): number {
  const fs = nodeModule<typeof import('node:fs')>('node:fs');
  const path = nodeModule<typeof import('node:path')>('node:path');
  if (!fs || !path) return 0;
  let at = path.resolve(dir);
  while (!fs.existsSync(at) && path.dirname(at) !== at) at = path.dirname(at);
  try {
    const { bavail, bsize } = fs.statfsSync(at);
    let held = 0;
    if (at === path.resolve(dir)) for (const name of fs.readdirSync(at)) held += fs.statSync(path.join(at, name), { throwIfNoEntry: false })?.size ?? 0;
    return held + Math.floor(bavail * bsize * DATA_DIR_FREE_SHARE);
  } catch {
    return 0;
  }
}

/** A node: built-in, reached without importing it (this module also runs in browsers); undefined there. */
function nodeModule<T>(id: string): T | undefined {
  return (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.(id) as T | undefined;
}

/**
 * A quarter of the machine's memory: the rest is left to the V8 heap (ids,
 * metadata), the OS and other processes. This module also runs in browsers
 * (the SDK's local index), so node:os is reached without importing it.
 */
export function defaultMemoryBudget(): number {
  const os = nodeOs();
  return os ? Math.floor(os.totalmem() / 4) : 1024 * 1024 * 1024;
}

/** node:os, reached without importing it (this module also runs in browsers); undefined there. */
function nodeOs() {
  return (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:os') as
    | { totalmem(): number; availableParallelism(): number }
    | undefined;
}

/** The machine's available parallelism (1 in a browser, where the SDK's local index reads this module). */
export function defaultKernelThreads(): number {
  return nodeOs()?.availableParallelism() ?? 1;
}
