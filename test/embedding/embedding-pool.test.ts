// The embedding threads: the same vectors as the encoder run directly, in
// any split into jobs; owners served in turn; a thread that dies fails only
// its call (503) and is replaced; the worker loads with no network at all.
import { Worker } from 'node:worker_threads';
import { expect } from 'chai';
import { EmbeddingPool, JOB_TEXTS } from '../../src/embedding/embedding-pool.js';
import { loadTextEmbedder } from '../../src/embedding/load-node.js';
import { MemoryBudget } from '../../src/limits/memory-budget.js';
import type { ApiError } from '../../src/errors.js';

const budget = new MemoryBudget(0, 1);
const reserve = (bytes: number, message: string) => budget.reserve('embedding', bytes, message);
const sentences = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `sentence ${i} of ${tag}, about the weather and the sea`);

describe('EmbeddingPool', function () {
  this.timeout(120_000);
  let pool: EmbeddingPool;
  beforeEach(() => {
    pool = new EmbeddingPool({ threads: 1, textsInFlight: 1000, textsInFlightPerToken: 500 }, reserve);
  });
  afterEach(() => pool.close());

  it('gives the vectors the encoder gives run directly, cut into jobs of JOB_TEXTS', async () => {
    const texts = sentences(2 * JOB_TEXTS + 1, 'split');
    const vectors = await pool.embed(texts, 'a');
    const expected = loadTextEmbedder().embed(texts);
    expect(vectors).to.have.length(texts.length);
    for (const [i, v] of vectors.entries()) expect(Array.from(v)).to.deep.equal(Array.from(expected.subarray(i * 512, (i + 1) * 512)));
  });

  it('serves owners in turn: a short call behind a long one waits about one job', async () => {
    const done: string[] = [];
    const long = pool.embed(sentences(10 * JOB_TEXTS, 'long'), 'a').then(() => done.push('a'));
    while (pool.size === 0 || pool.textsInFlight === 0) await new Promise((r) => setTimeout(r, 1));
    let jobsBefore = -1;
    const short = pool.embed(sentences(JOB_TEXTS, 'short'), 'b').then(() => {
      jobsBefore = pool.jobsRun;
      done.push('b');
    });
    await Promise.all([long, short]);
    expect(done).to.deep.equal(['b', 'a']);
    // a's first job (maybe its second, if it was already sent when b came) then b's.
    expect(jobsBefore).to.be.at.most(3);
  });

  it('fails only the call whose thread died (503 EMBEDDING_UNAVAILABLE), and embeds again on a new thread', async () => {
    const call = pool.embed(sentences(20 * JOB_TEXTS, 'doomed'), 'a');
    while (pool.busyWorkers.length === 0) await new Promise((r) => setTimeout(r, 1));
    await pool.busyWorkers[0].terminate();
    const err = (await call.then(
      () => null,
      (e: ApiError) => e,
    )) as ApiError;
    expect(err.code).to.equal('EMBEDDING_UNAVAILABLE');
    expect(err.status).to.equal(503);
    expect(pool.threadsReplaced).to.equal(1);
    expect(await pool.embed(['alive again'], 'a')).to.have.length(1);
  });
});

describe('embedding worker', function () {
  this.timeout(120_000);

  it('loads the model and embeds with fetch and sockets refusing (no network touched)', async () => {
    const url = new URL('../../src/embedding/embedding-worker.ts', import.meta.url).href;
    const worker = new Worker(
      // tsx (which runs the TypeScript source here) talks to its own local pipe when it loads: refused from after it is registered.
      `const net = require('node:net');
       const { parentPort } = require('node:worker_threads');
       import('tsx/esm/api').then((tsx) => {
         tsx.register();
         globalThis.fetch = () => { parentPort.postMessage({ network: 'fetch' }); return Promise.reject(new Error('no network')); };
         net.Socket.prototype.connect = function () { parentPort.postMessage({ network: 'socket' }); throw new Error('no network'); };
         return import(${JSON.stringify(url)});
       });`,
      { eval: true },
    );
    const messages: unknown[] = [];
    try {
      const vectors = await new Promise<Float32Array>((resolve, reject) => {
        worker.on('error', reject);
        worker.on('message', (message: Record<string, unknown>) => {
          messages.push(message);
          if ('ready' in message) worker.postMessage({ texts: ['offline'] });
          if ('vectors' in message) resolve(message.vectors as Float32Array);
        });
      });
      expect(vectors).to.have.length(512);
    } finally {
      await worker.terminate();
    }
    expect(messages.filter((m) => typeof m === 'object' && m !== null && 'network' in m)).to.deep.equal([]);
  });
});
