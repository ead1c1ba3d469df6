// The SDK in Node as a package import (`tempvec/sdk`, the build with its
// declarations): it asks for a baseUrl it cannot guess, reports a server it
// cannot reach as NETWORK_ERROR with the cause, a kernel it cannot load as
// KERNEL_UNAVAILABLE saying what to pass, and types codes and enums as unions.
import { expect } from 'chai';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { TempvecClient, TempvecError, LocalIndex } from 'tempvec/sdk';
import { useServer } from '../helpers/http.js';

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function failure(promise: Promise<unknown> | (() => unknown)): Promise<TempvecError> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (e) {
    expect(e).to.be.instanceOf(TempvecError);
    return e as TempvecError;
  }
  throw new Error('expected a TempvecError');
}

describe('SDK in Node (import from tempvec/sdk)', function () {
  this.timeout(60_000);
  const api = useServer({ tokenRatePerMin: 0 });

  it('without a baseUrl, throws BASE_URL_REQUIRED saying what to pass', async () => {
    const err = await failure(() => new TempvecClient());
    expect(err.code).to.equal('BASE_URL_REQUIRED');
    expect(err.message).to.include('loaded from file:').and.include('baseUrl');
    expect((await failure(() => new TempvecClient({ baseUrl: '127.0.0.1:3000' }))).code).to.equal('BASE_URL_REQUIRED');
  });

  it('a refused connection is NETWORK_ERROR with status 0 and the cause', async () => {
    const port = await closedPort();
    const err = await failure(new TempvecClient({ baseUrl: `http://127.0.0.1:${port}` }).createToken());
    expect(err).to.deep.include({ code: 'NETWORK_ERROR', status: 0 });
    expect(err.message).to.include(`POST http://127.0.0.1:${port}/token`).and.include('ECONNREFUSED');
    expect(err.cause).to.be.instanceOf(TypeError);
  });

  it('an answer that is not a tempvec error body is HTTP_ERROR with its status', async () => {
    const err = await failure(new TempvecClient({ baseUrl: `${api.base}/not-tempvec` }).limits());
    expect(err).to.deep.include({ code: 'NOT_FOUND', status: 404 }); // the server's own 404 body still counts
    const proxy = async () => new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' });
    const viaProxy = await failure(new TempvecClient({ baseUrl: api.base, fetch: proxy }).limits());
    expect(viaProxy).to.deep.include({ code: 'HTTP_ERROR', status: 502 });
  });

  it('works against a live server given its baseUrl', async () => {
    const client = new TempvecClient({ baseUrl: api.base });
    await client.add({ id: 'a', vector: [1, 0] });
    expect((await client.search([1, 0])).results.map((h) => h.id)).to.deep.equal(['a']);
  });

  it('LocalIndex.load() failures are KERNEL_UNAVAILABLE naming wasmUrl and wasm', async () => {
    const port = await closedPort();
    for (const wasmUrl of ['file:///nonexistent/kernel.wasm', `http://127.0.0.1:${port}/kernel.wasm`, `${api.base}/no-kernel-here.wasm`]) {
      const err = await failure(LocalIndex.load({ wasmUrl }));
      expect(err.code, wasmUrl).to.equal('KERNEL_UNAVAILABLE');
      expect(err.message, wasmUrl).to.include(wasmUrl).and.include('wasmUrl').and.include('wasm:');
    }
    const bad = await failure(LocalIndex.load({ wasm: new Uint8Array([0, 1, 2, 3]) }));
    expect(bad.code).to.equal('KERNEL_UNAVAILABLE');
    expect((await LocalIndex.load({ wasmUrl: `${api.base}/kernel.wasm` })).kernelSource).to.equal('instantiateStreaming');
  });

  it('types error codes and enums as unions (tsc --strict on a package import)', () => {
    const file = fileURLToPath(new URL('./fixtures/package-import.ts', import.meta.url));
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipLibCheck: true,
    });
    expect(ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).to.deep.equal([]);
  });
});
