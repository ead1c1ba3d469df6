// Request bodies in the memory budget as their bytes arrive (src/http/body/arrival.ts):
// a body that trickles holds what it sent and one step ahead, never its
// announced length (32 MiB; an import 512 MiB); a body that outgrows the room
// left is refused mid-way with 503 and nothing is stored.
import { expect } from 'chai';
import { connect } from 'node:net';
import { BODY_RESERVE_STEP } from '../../src/http/body/arrival.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MiB = 1024 * 1024;

/** A raw POST whose headers announce `length` bytes, then `first` of them; `rest()` sends more; `answer()` is what came back once the server closed or `waitMs` passed. */
async function rawPost(url: string, path: string, token: string, length: number, first: string, type = 'application/json') {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\nAuthorization: Bearer ${token}\r\n\r\n${first}`);
  return {
    send: (text: string) => socket.write(text),
    async answer(waitMs = 5000) {
      await Promise.race([closed, sleep(waitMs)]);
      const [head, body] = received.split('\r\n\r\n');
      return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1]), head, body: body ? JSON.parse(body) : undefined };
    },
    close: () => socket.destroy(),
  };
}

/** A JSON body of exactly `bytes` bytes: `json` padded with spaces. */
const padded = (json: string, bytes: number) => json.padEnd(bytes, ' ');

describe('request bodies held in the memory budget as they arrive', function () {
  this.timeout(30_000);
  let live: LiveApp;
  let token: string;
  before(async () => {
    live = await startApp({ requestRatePerSec: 0, tokenRatePerMin: 0 });
    token = await live.newToken();
  });
  after(() => live.close());
  afterEach(() => {
    live.store.budget.limitBytes = 0;
  });

  const inFlight = () => live.store.budget.usage().bodiesInFlightBytes;
  const count = async () => (await live.send('POST', '/vectors/count', { token, body: {} })).body.count;

  for (const [path, type, announced, first] of [
    ['/vectors/add', 'application/json', 32 * MiB, '{"id":"a",'],
    ['/vectors/import', 'application/x-ndjson', 512 * MiB, '{"format":"tempvec-export","version":1,'],
  ] as const) {
    it(`a body announcing ${announced / MiB} MiB and trickling holds one step, not its length: ${path}`, async () => {
      const conn = await rawPost(live.url, path, token, announced, first, type);
      try {
        await sleep(200);
        expect(inFlight()).to.equal(BODY_RESERVE_STEP);
        // Past the first step, the reservation follows what arrived.
        conn.send(' '.repeat(3 * MiB));
        for (let waited = 0; inFlight() < 3 * MiB && waited < 3000; waited += 50) await sleep(50);
        expect(inFlight()).to.be.within(3 * MiB, 3 * MiB + first.length + BODY_RESERVE_STEP);
      } finally {
        conn.close();
      }
      for (let waited = 0; inFlight() > 0 && waited < 3000; waited += 50) await sleep(50);
      expect(inFlight()).to.equal(0);
    });
  }

  it('takes a body that fits the room left exactly, and refuses one a byte larger mid-way with 503, storing nothing', async () => {
    const bytes = 3 * MiB;
    const json = '{"id":"a","vector":[1,2]}';
    const { budget } = live.store;
    budget.limitBytes = budget.usedBytes + bytes;
    const fits = await live.send('POST', '/vectors/has', { token, raw: padded('{"id":"a"}', bytes) });
    expect(fits.status, fits.text).to.equal(200);

    budget.limitBytes = budget.usedBytes + bytes - 1;
    const conn = await rawPost(live.url, '/vectors/add', token, bytes, padded(json, bytes));
    const refused = await conn.answer();
    expect(refused.status).to.equal(503);
    expect(refused.body.error.code).to.equal('SERVER_AT_CAPACITY');
    // Refused after its first step was taken: the old rule refused it up front, this one while it arrived.
    expect(refused.body.error.message).to.match(/while this body arrived/);
    expect(refused.head).to.match(/connection: close/i);
    budget.limitBytes = 0;
    expect(await count()).to.equal(0);
    expect(inFlight()).to.equal(0);
  });

  it('refuses a body up front when not even its first step fits', async () => {
    const { budget } = live.store;
    budget.limitBytes = budget.usedBytes + 100;
    const res = await live.send('POST', '/vectors/add', { token, raw: padded('{"id":"a","vector":[1,2]}', 1000) });
    expect(res.status).to.equal(503);
    expect(res.body.error.message).to.match(/nothing was read/);
    budget.limitBytes = 0;
    expect(await count()).to.equal(0);
  });
});
