// The SDK bundle does nothing when imported: no module of it reads the
// environment or the machine (loadConfig, node:os through
// process.getBuiltinModule) until LocalIndex.load asks for its defaults,
// nor adds a global.
// Each import runs in a fresh Node process whose process.env and
// getBuiltinModule count their reads; a load afterwards shows the counters
// see what loadConfig reads.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

interface Reads {
  env: string[];
  builtins: string[];
}

/** In a fresh process: the reads `modules` make when imported (and the globals they add), then the reads of a LocalIndex.load. */
async function readsOf(modules: string[], loaderArgs: string[] = []): Promise<{ atImport: Reads & { globals: string[] }; atLoad: Reads }> {
  const script = `
    const reads = { env: [], builtins: [] };
    // Only reads made by the SDK's code count: Node's module loader reads a few variables of its own at each import.
    const ours = (stack = new Error().stack) => [${JSON.stringify(`${root}src/`)}, ${JSON.stringify(`${root}build/sdk.js`)}].some((path) => stack.includes(path));
    const env = process.env;
    process.env = new Proxy(env, { get: (target, key) => (typeof key === 'string' && ours() && reads.env.push(key), target[key]) });
    const getBuiltinModule = process.getBuiltinModule.bind(process);
    process.getBuiltinModule = (id) => (ours() && reads.builtins.push(id), getBuiltinModule(id));
    const globals = new Set(Object.getOwnPropertyNames(globalThis));
    const imported = [];
    for (const url of ${JSON.stringify(modules)}) imported.push(await import(url));
    const atImport = { ...structuredClone(reads), globals: Object.getOwnPropertyNames(globalThis).filter((name) => !globals.has(name)) };
    reads.env.length = 0;
    reads.builtins.length = 0;
    const { LocalIndex } = imported.find((m) => m.LocalIndex);
    await LocalIndex.load({ wasm: getBuiltinModule('node:fs').readFileSync(${JSON.stringify(`${root}build/kernel.wasm`)}) });
    process.stdout.write(JSON.stringify({ atImport, atLoad: reads }));
  `;
  const { stdout } = await run(process.execPath, [...loaderArgs, '--input-type=module', '-e', script], { cwd: root });
  return JSON.parse(stdout);
}

describe('SDK bundle: nothing runs at import', function () {
  this.timeout(60_000);

  it('the built bundle (build/sdk.js) reads neither the environment nor the machine until LocalIndex.load', async () => {
    const { atImport, atLoad } = await readsOf([pathToFileURL(`${root}build/sdk.js`).href]);
    expect(atImport).to.deep.equal({ env: [], builtins: [], globals: [] });
    expect(atLoad.builtins, 'the counters see loadConfig reading the machine').to.include('node:os');
  });

  it('no source module of the bundle reads either when imported', async () => {
    // The bundle's modules as esbuild finds them from its entry (package.json build:sdk).
    const built = await esbuild.build({
      entryPoints: [`${root}src/sdk/index.ts`],
      absWorkingDir: root,
      bundle: true,
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const sources = Object.keys(built.metafile.inputs).filter((path) => path.startsWith('src/'));
    expect(sources).to.include.members(['src/config.ts', 'src/sdk/local-index.ts', 'src/index/vector-index.ts', 'src/schemas/index.ts']);
    const modules = sources.map((path) => pathToFileURL(root + path).href);
    const { atImport, atLoad } = await readsOf(modules, ['--import', 'tsx']);
    expect(atImport).to.deep.equal({ env: [], builtins: [], globals: [] });
    expect(atLoad.builtins).to.include('node:os');
  });
});
