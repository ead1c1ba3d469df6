// LocalIndex (the built bundle) refuses what the server refuses: batch caps
// (add-many, search-many, delete-many), topK, candidatePool, capacity and id
// length, with the code and details the client surfaces for the server's
// answer. Its limits are the server defaults bundled with the SDK, or a
// server's own GET /limits when passed in.
import { expect } from 'chai';
import { loadConfig, publicLimits, requestLimitsOf } from '../../src/config.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';

type Sdk = typeof import('../../src/sdk/index.js');
type LocalIndex = Awaited<ReturnType<Sdk['LocalIndex']['load']>>;
type Client = InstanceType<Sdk['TempvecClient']>;
const bundle = new URL('../../build/sdk.js', import.meta.url).href;

const records = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ id: `r${from + i}`, vector: [1 + ((from + i) % 5), 1, 2] }));
const queries = (n: number) => Array.from({ length: n }, (_, i) => [1, i % 3, 2]);
const ids = (n: number) => Array.from({ length: n }, (_, i) => `r${i}`);

/** The same mistake locally and on the server: both refuse it with one code and the same details. */
type Mistake = [what: string, remote: (client: Client) => Promise<unknown>, mine: (local: LocalIndex) => unknown, code: string];

async function expectSameRefusal(sdk: Sdk, client: Client, local: LocalIndex, [what, remote, mine, code]: Mistake) {
  const serverError = await remote(client).then(
    () => null,
    (e) => e,
  );
  let localError: any = null;
  const sizeBefore = local.size;
  try {
    mine(local);
  } catch (e) {
    localError = e;
  }
  expect(serverError, what).to.be.instanceOf(sdk.TempvecError);
  expect(serverError.code, what).to.equal(code);
  expect(localError, what).to.be.instanceOf(sdk.TempvecError);
  expect(localError.code, what).to.equal(code);
  expect(localError.status, what).to.equal(serverError.status);
  if (code === 'BATCH_TOO_LARGE' || code === 'CAPACITY_EXCEEDED') expect(localError.details, what).to.deep.equal(serverError.details);
  else expect(localError.details.issues[0].path, what).to.equal(serverError.details.issues[0].path);
  expect(local.size, `${what}: nothing stored`).to.equal(sizeBefore);
}

describe('SDK LocalIndex limits (in Node, from the bundle)', () => {
  let sdk: Sdk;
  let live: LiveApp | undefined;
  before(async () => {
    sdk = await import(bundle);
  });
  afterEach(async () => {
    await live?.close();
    live = undefined;
  });

  it('applies the bundled server defaults: each batch cap, topK and candidatePool as the server does', async () => {
    live = await startApp({ tokenRatePerMin: 0, requestRatePerSec: 0 });
    const client = new sdk.TempvecClient({ baseUrl: live.url });
    const { limits } = await client.limits();
    const local = await sdk.LocalIndex.load();
    await client.addMany(records(5));
    local.addMany(records(5));
    const { addMany, searchMany, deleteMany } = limits.batch;
    const mistakes: Mistake[] = [
      ['add-many past its cap', (c) => c.addMany(records(addMany + 1)), (l) => l.addMany(records(addMany + 1)), 'BATCH_TOO_LARGE'],
      ['search-many past its cap', (c) => c.searchMany(queries(searchMany + 1)), (l) => l.searchMany(queries(searchMany + 1)), 'BATCH_TOO_LARGE'],
      ['delete-many past its cap', (c) => c.deleteMany(ids(deleteMany + 1)), (l) => l.delete(ids(deleteMany + 1)), 'BATCH_TOO_LARGE'],
      ['empty delete-many', (c) => c.deleteMany([]), (l) => l.delete([]), 'VALIDATION_ERROR'],
      [
        'topK past its max',
        (c) => c.search([1, 1, 1], { topK: limits.topK.max + 1 }),
        (l) => l.search([1, 1, 1], { topK: limits.topK.max + 1 }),
        'VALIDATION_ERROR',
      ],
      [
        'candidatePool past its max',
        (c) => c.searchMany([[1, 1, 1]], { candidatePool: limits.candidatePool.max + 1 }),
        (l) => l.searchMany([[1, 1, 1]], { candidatePool: limits.candidatePool.max + 1 }),
        'VALIDATION_ERROR',
      ],
    ];
    for (const mistake of mistakes) await expectSameRefusal(sdk, client, local, mistake);

    // At the caps exactly, both take the request.
    expect((await client.addMany(records(addMany, 5))).mutation.added).to.equal(addMany);
    expect(local.addMany(records(addMany, 5)).added).to.equal(addMany);
    expect((await client.searchMany(queries(searchMany), { topK: limits.topK.max })).results).to.have.length(searchMany);
    expect(local.searchMany(queries(searchMany), { topK: limits.topK.max }).results).to.have.length(searchMany);
    expect((await client.deleteMany(ids(deleteMany))).mutation.deleted).to.equal(local.delete(ids(deleteMany)).deleted);
    expect(local.size).to.equal((await client.getSession()).session.vectorCount);
  });

  it("applies a server's own limits when given its GET /limits: batch caps, capacity and id length", async () => {
    live = await startApp({
      tokenRatePerMin: 0,
      requestRatePerSec: 0,
      maxAddManyBatch: 3,
      maxSearchManyBatch: 2,
      maxDeleteManyBatch: 2,
      maxVectorsPerSession: 5,
      maxIdLength: 4,
    });
    const client = new sdk.TempvecClient({ baseUrl: live.url });
    const local = await sdk.LocalIndex.load({ limits: (await client.limits()).limits });
    expect(local.maxVectors).to.equal(5);
    await client.addMany(records(3));
    local.addMany(records(3));
    const mistakes: Mistake[] = [
      ['add-many past 3', (c) => c.addMany(records(4)), (l) => l.addMany(records(4)), 'BATCH_TOO_LARGE'],
      ['search-many past 2', (c) => c.searchMany(queries(3)), (l) => l.searchMany(queries(3)), 'BATCH_TOO_LARGE'],
      ['delete-many past 2', (c) => c.deleteMany(ids(3)), (l) => l.delete(ids(3)), 'BATCH_TOO_LARGE'],
      ['past maxVectors 5', (c) => c.addMany(records(3, 3)), (l) => l.addMany(records(3, 3)), 'CAPACITY_EXCEEDED'],
      ['id longer than 4', (c) => c.add({ id: 'r12345', vector: [1, 2, 3] }), (l) => l.add({ id: 'r12345', vector: [1, 2, 3] }), 'VALIDATION_ERROR'],
    ];
    for (const mistake of mistakes) await expectSameRefusal(sdk, client, local, mistake);
    expect(local.addMany(records(2, 3)).added).to.equal(2);
    expect(local.searchMany(queries(2)).results).to.have.length(2);
  });

  it("reads a server's request limits back from what GET /limits publishes", () => {
    const config = loadConfig(
      {},
      {
        maxVectorsPerSession: 7,
        maxAddManyBatch: 11,
        maxGetManyBatch: 13,
        maxDeleteManyBatch: 17,
        maxSearchManyBatch: 19,
        maxIdLength: 23,
        maxMetadataBytes: 29,
        maxJsonDepth: 3,
        maxMetadataKeys: 31,
        maxFilterKeys: 37,
        maxTextBytes: 41,
        maxFilterNodes: 43,
        maxRecordTtlMs: 47,
      },
    );
    const back = requestLimitsOf(publicLimits(config));
    for (const [key, value] of Object.entries(back)) expect(value, key).to.equal(config[key as keyof typeof config]);
    expect(Object.keys(back)).to.have.length(13);
  });
});
