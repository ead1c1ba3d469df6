// KERNEL_BUILD: the server runs the build it names, says so (session
// config.backend, /limits backend) and serves it at /kernel.wasm, with the
// simd128 build at /kernel.simd128.wasm; a bad value, or relaxed where the
// engine cannot run it, stops start-up with one line and exit 1.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { type Backend, backendFor, ConfigError, type KernelBuild, loadConfig } from '../../src/config.js';
import { relaxedSimdSupported } from '../../src/kernel/relaxed-simd.js';
import { spawnServer } from '../../bench/lib/spawn-server.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';
import { ResponseChecker } from '../helpers/openapi-check.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const relaxedRuns = relaxedSimdSupported();
const noRelaxed = `Node ${process.version} does not run relaxed SIMD`;

/** npm start's launcher (src/start.ts) with `env` and Node `flags`; resolves once it listens, or at its exit. */
async function launch(
  env: Record<string, string>,
  flags: string[] = [],
): Promise<{ code: number | string | null; log: string; url?: string; stop(): Promise<void> }> {
  const server = spawnServer({ entry: 'launcher', env: { MEMORY_BUDGET_BYTES: '0', ...env }, nodeFlags: flags });
  const url = await server.listening().catch(() => undefined);
  if (!url) return { code: await server.exited, log: server.output(), stop: async () => {} };
  const stop = async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  };
  return { code: null, log: server.output(), url, stop };
}

describe('KERNEL_BUILD', function () {
  this.timeout(60_000);

  it('is auto by default, and auto and simd128 run the simd128 build; relaxed the relaxed one', () => {
    expect(loadConfig({}).kernelBuild).to.equal('auto');
    expect(backendFor('auto')).to.equal('wasm-simd128');
    expect(backendFor('simd128')).to.equal('wasm-simd128');
    expect(backendFor('relaxed')).to.equal('wasm-relaxed-simd');
  });

  it('refuses any other value with ConfigError', () => {
    for (const bad of ['fast', 'SIMD128', 'relaxed-simd', ' auto']) {
      expect(() => loadConfig({ KERNEL_BUILD: bad })).to.throw(ConfigError, `KERNEL_BUILD must be one of auto, simd128, relaxed, got "${bad}"`);
    }
  });

  it('stops start-up on a bad value: one line, exit 1', async () => {
    const run = await launch({ KERNEL_BUILD: 'fastest' });
    expect(run.code).to.equal(1);
    expect(run.log.trim()).to.equal('tempvec: cannot start: KERNEL_BUILD must be one of auto, simd128, relaxed, got "fastest"');
  });

  it(
    relaxedRuns
      ? 'relaxed: accepted where the engine runs relaxed SIMD'
      : 'relaxed: stops start-up where the engine cannot run it (this Node): one line, exit 1',
    async () => {
      if (relaxedRuns) {
        expect(loadConfig({ KERNEL_BUILD: 'relaxed' }).kernelBuild).to.equal('relaxed');
        return;
      }
      expect(() => loadConfig({ KERNEL_BUILD: 'relaxed' })).to.throw(
        ConfigError,
        /KERNEL_BUILD=relaxed: this engine \(Node v20\.[\d.]+\) does not run WebAssembly relaxed SIMD; use Node 22 or later/,
      );
      const run = await launch({ KERNEL_BUILD: 'relaxed' });
      expect(run.code).to.equal(1);
      expect(run.log.trim().split('\n')).to.have.length(1);
      expect(run.log).to.match(/^tempvec: cannot start: KERNEL_BUILD=relaxed: this engine \(Node v20\.[\d.]+\) does not run WebAssembly relaxed SIMD/);
    },
  );

  it('relaxed: npm start runs it, given the Node flag where the engine needs one', async () => {
    const flags = relaxedRuns ? [] : ['--experimental-wasm-relaxed-simd'];
    const run = await launch({ KERNEL_BUILD: 'relaxed', KERNEL_THREADS: '2' }, flags);
    try {
      expect(run.url, run.log).to.be.a('string');
      const limits = await (await fetch(`${run.url}/limits`)).json();
      expect(limits.limits.backend).to.equal('wasm-relaxed-simd');
    } finally {
      await run.stop();
    }
  });

  const builds: [KernelBuild, Backend, string][] = [
    ['auto', 'wasm-simd128', 'build/kernel.wasm'],
    ['simd128', 'wasm-simd128', 'build/kernel.wasm'],
    ['relaxed', 'wasm-relaxed-simd', 'build/kernel.relaxed.wasm'],
  ];
  for (const [kernelBuild, backend, file] of builds) {
    for (const kernelThreads of [1, 2]) {
      const runs = kernelBuild !== 'relaxed' || relaxedRuns;
      describe(`the server on KERNEL_BUILD=${kernelBuild}, ${kernelThreads} kernel thread${kernelThreads > 1 ? 's' : ''}${runs ? '' : ` (skipped: ${noRelaxed})`}`, () => {
        let live: LiveApp;
        let checker: ResponseChecker;
        before(async function () {
          if (!runs) this.skip();
          live = await startApp({ kernelBuild, kernelThreads, tokenRatePerMin: 0, requestRatePerSec: 0 });
          checker = new ResponseChecker((await live.send('GET', '/openapi.json')).body);
        });
        after(() => live?.close());

        const send = async (method: string, path: string, options: Parameters<LiveApp['send']>[2] = {}) => {
          const reply = await live.send(method, path, options);
          checker.check(method, path, reply);
          expect(reply.status, `${method} ${path}: ${reply.text.slice(0, 200)}`).to.be.below(300);
          return reply;
        };

        it(`names ${backend} in /limits and in the session, and answers searches as the OpenAPI document declares`, async () => {
          expect((await send('GET', '/limits')).body.limits.backend).to.equal(backend);
          const token = (await send('POST', '/token')).body.token;
          // Past the pool's smallest split (POOL_MIN_WORK), so 2 threads share the scan.
          const vectors = Array.from({ length: 3000 }, (_, i) => ({
            id: `v${i}`,
            vector: Array.from({ length: 384 }, (_, d) => Math.sin(i * 0.37 + d * 1.3)),
          }));
          for (let i = 0; i < vectors.length; i += 1000) await send('POST', '/vectors/add-many', { token, body: { vectors: vectors.slice(i, i + 1000) } });
          const one = (await send('POST', '/search', { token, body: { queryVector: vectors[7].vector, topK: 5 } })).body;
          expect(one.results[0].id).to.equal('v7');
          expect(one.session.config.backend).to.equal(backend);
          const many = (await send('POST', '/search-many', { token, body: { queryVectors: vectors.slice(0, 8).map((v) => v.vector), topK: 5 } })).body;
          // Within one build, a query's scores are the same alone and in a batch.
          expect(many.results[7]).to.deep.equal(one.results);
          expect((await send('GET', '/session', { token })).body.session.config.backend).to.equal(backend);
        });

        it(`serves ${file} at /kernel.wasm and build/kernel.wasm at /kernel.simd128.wasm`, async () => {
          for (const [path, want] of [
            ['/kernel.wasm', file],
            ['/kernel.simd128.wasm', 'build/kernel.wasm'],
          ]) {
            await send('GET', path);
            const bytes = Buffer.from(await (await fetch(`${live.url}${path}`)).arrayBuffer());
            expect(bytes.equals(readFileSync(`${ROOT}/${want}`)), path).to.equal(true);
          }
        });
      });
    }
  }
});
