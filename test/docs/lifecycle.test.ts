// docs/lifecycle.md's request path is the one app.ts builds: the generated
// table equals REQUEST_PATH, and createApp() uses every step of it, in order.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../src/config.js';
import { createApp, REQUEST_PATH } from '../../src/http/app.js';
import { respond } from '../../src/http/respond.js';
import { LIFECYCLE_PATH, requestPathTable, tableIn } from '../../scripts/doc-tables.js';

describe('docs/lifecycle.md', () => {
  it('request path table equals the one generated from REQUEST_PATH in app.ts (npm run docs)', () => {
    expect(tableIn(readFileSync(LIFECYCLE_PATH, 'utf8'), 'request-path-table'), 'run npm run docs').to.equal(requestPathTable());
  });

  it('createApp() uses the middleware of REQUEST_PATH and nothing else, in its order', async () => {
    for (const instanceId of ['', 'a']) {
      const { app, store, pool } = createApp({ config: loadConfig({}, { instanceId, kernelThreads: 1 }) });
      store.stopSweeper();
      await pool?.close();
      const used = REQUEST_PATH.filter((step) => instanceId !== '' || step.name !== 'instance header').map((step) => step.name);
      expect(app.middleware, `INSTANCE_ID=${instanceId}`).to.have.length(used.length);
      expect(app.middleware.indexOf(respond), 'respond').to.equal(used.indexOf('respond'));
    }
  });
});
