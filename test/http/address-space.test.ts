// Address space is budgeted: sessions past MAX_WASM_MEMORIES get 503 with
// Retry-After and nothing is stored; a WebAssembly allocation that fails anyway
// is a 503 JSON answer, not a 500; body buffers in WebAssembly memories are capped.
import { expect } from 'chai';
import Koa from 'koa';
import { SpareBuffers } from '../../src/http/body/spare-buffers.js';
import { errorHandler } from '../../src/http/error-handler.js';
import { WASM_MEMORIES_OUTSIDE_SESSIONS } from '../../src/limits/wasm-memories.js';
import { expectError, expectOk, useServer } from '../helpers/http.js';

describe('address space budget', () => {
  const api = useServer({ maxWasmMemories: WASM_MEMORIES_OUTSIDE_SESSIONS + 2, requestRatePerSec: 0, tokenRatePerMin: 0 });

  it("refuses a session's first add past MAX_WASM_MEMORIES with 503, storing nothing", async () => {
    const [a, b, c] = [await api.token(), await api.token(), await api.token()];
    expectOk(await api.post('/vectors/add', { token: a, body: { id: 'x', vector: [1, 2] } }));
    expectOk(await api.post('/vectors/add', { token: b, body: { id: 'x', vector: [1, 2] } }));
    const refused = await api.post('/vectors/add', { token: c, body: { id: 'x', vector: [1, 2] } });
    expectError(refused, 503, 'SERVER_AT_CAPACITY');
    expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
    expect(expectOk(await api.get('/session', { token: c })).session.vectorCount).to.equal(0);
    // A session that already has its memory keeps writing.
    expectOk(await api.post('/vectors/add', { token: a, body: { id: 'y', vector: [3, 4] } }));
    // A reset frees a memory; the waiting session then gets one.
    expectOk(await api.post('/index/reset', { token: b }));
    expectOk(await api.post('/vectors/add', { token: c, body: { id: 'x', vector: [1, 2] } }));
    expect(api.store.wasmMemories()).to.equal(WASM_MEMORIES_OUTSIDE_SESSIONS + 2);
  });

  it('answers a WebAssembly allocation failure with 503 JSON, not 500', async () => {
    const app = new Koa();
    app.silent = true;
    app.use(errorHandler());
    app.use(() => {
      throw new RangeError('WebAssembly.Memory(): could not allocate memory');
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/`);
    const body = await res.json();
    server.close();
    expect(res.status).to.equal(503);
    expect(body.error.code).to.equal('SERVER_AT_CAPACITY');
    expect(res.headers.get('retry-after')).to.equal('60');
  });

  it('makes no more WebAssembly body buffers than its cap, reusing given-back ones', () => {
    let made = 0;
    const pool = new SpareBuffers(
      (bytes) => {
        made++;
        return new ArrayBuffer(bytes);
      },
      1 << 20,
      1 << 22,
      2,
    );
    const a = pool.tryTake(1000);
    const b = pool.tryTake(1000);
    expect(a).to.not.equal(null);
    expect(b).to.not.equal(null);
    expect(pool.tryTake(1000)).to.equal(null);
    pool.give([a!]);
    expect(pool.tryTake(1000)).to.equal(a);
    expect(made).to.equal(2);
  });
});
