// Session stores over a fresh DATA_DIR per test: each test's stores finish
// their compactions before the directory is removed, and their warnings about
// logs set aside are kept out of the test output.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { type Clock, SessionStore } from '../../src/sessions/session-store.js';

const kernel = loadKernelModule();

/**
 * Call inside a describe(): `dir()` is this test's DATA_DIR, `open()` a store
 * over it (TTL 10 min unless overridden), `log()` writes past the muted warnings.
 */
export function useDataDirStores(prefix: string) {
  let dir = '';
  let stores: SessionStore[] = [];
  const console_ = { warn: console.warn, error: console.error };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    console.warn = console.error = () => {};
  });
  afterEach(async () => {
    await Promise.all(stores.map((store) => store.whenIdle()));
    stores = [];
    Object.assign(console, console_);
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir: () => dir,
    log: (line: string) => console_.warn(line),
    open(overrides: Partial<Config>, now?: Clock): SessionStore {
      const store = new SessionStore(loadConfig({}, { dataDir: dir, sessionTtlMs: 600_000, ...overrides }), kernel, now);
      stores.push(store);
      return store;
    },
  };
}
