// GET /healthz and GET /readyz: live at once; ready only once the sessions on
// disk are listed (their tokens answer INSTANCE_UNAVAILABLE until then).
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectError, expectOk, TestServer } from '../helpers/http.js';
import { startApp } from '../helpers/live-app.js';

describe('GET /healthz and GET /readyz', () => {
  let dataDir: string;
  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'tempvec-ready-'));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('answer 200 on an app without DATA_DIR', async () => {
    const live = await startApp();
    try {
      expect(expectOk(await live.send('GET', '/healthz')).status).to.equal('ok');
      const ready = expectOk(await live.send('GET', '/readyz'));
      expect(ready.checks).to.deep.equal({ kernelCompiled: true, sessionsRestored: true, shuttingDown: false });
    } finally {
      await live.close();
    }
  });

  it('/readyz is 503 once shutting down, while /healthz still answers', async () => {
    const server = new TestServer();
    await server.start();
    try {
      server.readiness.shuttingDown = true;
      expect(expectError(await server.get('/readyz'), 503, 'INSTANCE_UNAVAILABLE').details.checks).to.deep.equal({
        kernelCompiled: true,
        sessionsRestored: true,
        shuttingDown: true,
      });
      expectOk(await server.get('/healthz'));
    } finally {
      await server.close();
    }
  });

  it('/readyz is 503 until the sessions on disk are restored, then they answer with their data', async () => {
    const first = await startApp({ dataDir, tokenRatePerMin: 0 });
    const token = await first.newToken();
    expectOk(await first.send('POST', '/vectors/add', { token, body: { id: 'kept', vector: [3, 4] } }));
    await first.close();

    const second = await startApp({ dataDir, tokenRatePerMin: 0 }, { deferRestore: true });
    try {
      expect(expectOk(await second.send('GET', '/healthz')).status).to.equal('ok');
      const notReady = await second.send('GET', '/readyz');
      expect(expectError(notReady, 503, 'INSTANCE_UNAVAILABLE').details).to.deep.equal({
        checks: { kernelCompiled: true, sessionsRestored: false, shuttingDown: false },
      });
      expect(notReady.headers.get('retry-after')).to.equal('1');
      // Not "unknown token": the session may well be on disk.
      expectError(await second.send('POST', '/vectors/get', { token, body: { id: 'kept' } }), 503, 'INSTANCE_UNAVAILABLE');
      expectError(await second.send('POST', '/token'), 503, 'INSTANCE_UNAVAILABLE');

      await second.restore();
      expect(expectOk(await second.send('GET', '/readyz')).status).to.equal('ready');
      expect(expectOk(await second.send('POST', '/vectors/get', { token, body: { id: 'kept' } })).vector).to.deep.include({ id: 'kept', vector: [3, 4] });
    } finally {
      await second.close();
    }
  });
});
