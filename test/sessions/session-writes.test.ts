// SessionWrites with DATA_DIR: a change refused for want of memory (a failed
// memory.grow) answers 503 and leaves nothing in the log, so a restart does
// not bring back a change its caller was told had failed. An import's plan
// (up to MAX_VECTORS_PER_SESSION records) is made in slices in its write turn.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { EXPORT_FORMAT, EXPORT_VERSION, type ExportHeader } from '../../src/export/format.js';
import { prepareImport, type ParsedImport } from '../../src/export/import-reader.js';
import { pointer } from '../../src/errors.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { SessionStore } from '../../src/sessions/session-store.js';
import { expectError, expectOk } from '../helpers/http.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';

const DIM = 64;
const vectorOf = (i: number) => Array.from({ length: DIM }, (_, j) => ((i * 13 + j * 7) % 41) / 8 - 2);
const records = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => ({ id: `v${from + k}`, vector: vectorOf(from + k) }));

describe('session writes and a failed memory grow', () => {
  let dir: string;
  let live: LiveApp | undefined;
  const grow = WebAssembly.Memory.prototype.grow;
  let grows = 0;
  const start = () => startApp({ dataDir: dir, tokenRatePerMin: 0, requestRatePerSec: 0, maxAddManyBatch: 5000 });

  /** Every memory.grow from JS throws, as V8 does when it finds no memory or address space. */
  function failGrows(): void {
    WebAssembly.Memory.prototype.grow = function failing() {
      grows++;
      throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
    };
  }

  /** A live session holding v0..v9, and the app restarted afterwards. */
  async function sessionOfTen(): Promise<string> {
    const token = await live!.newToken();
    expectOk(await live!.send('POST', '/vectors/add-many', { token, body: { metric: 'l2', vectors: records(0, 10) } }));
    return token;
  }

  async function expectOnlyTenAfterRestart(token: string): Promise<void> {
    await live!.close();
    live = await start();
    const session = expectOk(await live.send('GET', '/session', { token }));
    expect(session.session.vectorCount).to.equal(10);
    expectError(await live.send('POST', '/vectors/get', { token, body: { id: 'v10' } }), 404, 'VECTOR_NOT_FOUND');
  }

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tempvec-writes-'));
    grows = 0;
    live = await start();
  });
  afterEach(async () => {
    WebAssembly.Memory.prototype.grow = grow;
    await live?.close();
    live = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 to an add whose grow fails, and a restart does not replay it', async () => {
    const token = await sessionOfTen();
    failGrows();
    const { error } = console;
    console.error = () => {};
    const refused = await live!.send('POST', '/vectors/add-many', { token, body: { vectors: records(10, 3000) } }).finally(() => {
      console.error = error;
    });
    WebAssembly.Memory.prototype.grow = grow;
    expect(grows, 'the add needed a grow').to.be.above(0);
    expectError(refused, 503, 'SERVER_AT_CAPACITY');
    expect(expectOk(await live!.send('GET', '/session', { token })).session.vectorCount).to.equal(10);
    await expectOnlyTenAfterRestart(token);
  });

  it('answers 503 to an import whose grow fails, and a restart does not replay it', async () => {
    const source = await live!.newToken();
    expectOk(await live!.send('POST', '/vectors/add-many', { token: source, body: { metric: 'l2', vectors: records(10, 3000) } }));
    const exported = await live!.send('GET', '/vectors/export', { token: source });
    expect(exported.status).to.equal(200);
    const token = await sessionOfTen();
    failGrows();
    const { error } = console;
    console.error = () => {};
    const refused = await live!
      .send('POST', '/vectors/import', { token, raw: exported.text, headers: { 'content-type': 'application/x-ndjson' } })
      .finally(() => {
        console.error = error;
      });
    WebAssembly.Memory.prototype.grow = grow;
    expect(grows, 'the import needed a grow').to.be.above(0);
    expectError(refused, 503, 'SERVER_AT_CAPACITY');
    await expectOnlyTenAfterRestart(token);
  });
});

describe("an import's plan in its write turn", () => {
  /** An import of `count` records of 8 values with a little metadata, into a session configured by its header. */
  function parsedImport(count: number): ParsedImport {
    const records = Array.from({ length: count }, (_, i) => ({ id: `r${i}`, vector: vectorOf(i).slice(0, 8), metadata: { i, tag: `t${i % 7}` } }));
    const header: ExportHeader = { format: EXPORT_FORMAT, version: EXPORT_VERSION, dimensions: 8, metric: 'l2', vectorType: 'float32', count };
    return { header, records, pathOf: (i) => pointer(i + 1) };
  }

  it('gives the event loop back while the plan of a large import is made, and makes the plan made in one piece', async () => {
    const store = new SessionStore(loadConfig({}, { tokenRatePerMin: 0 }), loadKernelModule());
    const { session } = store.create();
    const parsed = parsedImport(50_000);
    let turns = 0;
    let counting = true;
    const count = () => {
      turns++;
      if (counting) setImmediate(count);
    };
    const { plan, turnsDuring } = await store.writes.inLoopTurn(session, async () => {
      const before = turns;
      setImmediate(count);
      const plan = await store.writes.prepareImport(session, parsed);
      return { plan, turnsDuring: turns - before };
    });
    counting = false;
    // 50,000 records take more than one REQUEST_SLICE_MS (2 ms) to plan: other turns of the loop ran in between.
    expect(turnsDuring, 'turns of the event loop during the plan').to.be.above(0);
    expect(plan).to.deep.equal(prepareImport(new VectorIndex(loadKernelModule(), 50_000), parsed));
    store.stopSweeper();
  });
});
