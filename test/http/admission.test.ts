// Admission control, scaled down: caps on bodies in flight (in all, per token,
// in bytes), a minimum body rate, Node's client errors as JSON, and a
// connection cap. Each refusal is the documented JSON error, and the server
// goes on serving.
import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { SPEC_LIMITS } from '../../src/config.js';
import { BODY_RESERVE_STEP } from '../../src/http/body/arrival.js';
import { expectError, expectOk, TestServer } from '../helpers/http.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Bodies announcing at most this go in the small bodies' lane; LARGE is one past it. */
const SMALL = SPEC_LIMITS.smallBodyBytes;
const LARGE = SMALL + 1;

/** A raw connection: send text, read everything until the server closes it or `waitMs` passes. */
function rawConnection(base: string) {
  const { hostname, port } = new URL(base);
  const socket: Socket = connect(Number(port), hostname);
  let received = '';
  let closed = false;
  socket.on('data', (chunk) => (received += chunk));
  socket.on('error', () => {});
  const ended = new Promise<void>((resolve) =>
    socket.on('close', () => {
      closed = true;
      resolve();
    }),
  );
  const ready = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return {
    socket,
    ready,
    send: (text: string) => socket.write(text),
    /** What arrived once the server closed the connection (or after waitMs). */
    async answer(waitMs = 5000) {
      await Promise.race([ended, sleep(waitMs)]);
      return { text: received, closed };
    },
    close: () => socket.destroy(),
  };
}

/**
 * A POST (to /vectors/add unless `to` says otherwise) whose headers announce
 * `length` bytes, followed by `sent` of them. `token`: a token (sent as
 * `Bearer <token>`) or a whole Authorization header value.
 */
async function heldBody(base: string, length: number, token?: string, sent = 1, to = { path: '/vectors/add', type: 'application/json' }) {
  const conn = rawConnection(base);
  await conn.ready;
  const authorization = token === undefined ? '' : `Authorization: ${token.includes(' ') ? token : `Bearer ${token}`}\r\n`;
  conn.send(`POST ${to.path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${to.type}\r\nContent-Length: ${length}\r\n${authorization}\r\n${'{'.padEnd(sent, ' ')}`);
  return conn;
}

function parseAnswer(text: string) {
  const [head, body] = text.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1]), head, body: body ? JSON.parse(body) : undefined };
}

describe('admission control', function () {
  this.timeout(30_000);
  const api = new TestServer({
    maxBodiesInFlight: 4,
    maxBodiesInFlightPerToken: 2,
    maxBodyBytesInFlight: 100_000,
    maxSmallBodiesInFlight: 3,
    maxImportsInFlight: 2,
    bodyGraceMs: 300,
    minBodyBytesPerSec: 2_000,
    headersTimeoutMs: 400,
    maxConnections: 100,
    requestRatePerSec: 0,
    tokenRatePerMin: 0,
  });
  before(() => api.start());
  after(() => api.close());
  const held: { close(): void }[] = [];
  afterEach(async () => {
    held.splice(0).forEach((c) => {
      c.close();
    });
    await sleep(50);
  });

  it('publishes the admission limits in /limits', async () => {
    const limits = expectOk(await api.get('/limits')).limits ?? expectOk(await api.get('/limits'));
    const admission = limits.admission ?? limits.limits?.admission;
    expect(admission).to.include({
      maxBodiesInFlight: 4,
      maxBodiesInFlightPerToken: 2,
      maxBodyBytesInFlight: 100_000,
      maxSmallBodiesInFlight: 3,
      smallBodyBytes: SMALL,
      minBodyBytesPerSec: 2_000,
      maxImportsInFlight: 2,
      maxImportsInFlightPerToken: 1,
    });
  });

  it('answers 503 SERVER_AT_CAPACITY past MAX_BODIES_IN_FLIGHT large bodies, then serves', async () => {
    const holders = [await api.token(), await api.token()];
    for (let i = 0; i < 4; i++) held.push(await heldBody(api.base, LARGE, holders[i % 2]));
    await sleep(100);
    expect(api.admission.usage).to.deep.include({ bodiesInFlight: 4, smallBodiesInFlight: 0 });
    const token = await api.token();
    const refused = parseAnswer((await (await heldBody(api.base, LARGE, token)).answer(3000)).text);
    expect(refused.status).to.equal(503);
    expect(refused.body.error.code).to.equal('SERVER_AT_CAPACITY');
    expect(refused.head.toLowerCase()).to.include('retry-after: 1');
    held.splice(0).forEach((c) => {
      c.close();
    });
    await sleep(100);
    expectOk(await api.post('/vectors/add', { token, body: JSON.stringify({ id: 'a', vector: [1, 2] }).padEnd(LARGE, ' ') }));
  });

  it('admits a small body while the large bodies fill MAX_BODIES_IN_FLIGHT and MAX_BODY_BYTES_IN_FLIGHT slowly', async () => {
    const holders = [await api.token(), await api.token()];
    const slow = [];
    for (let i = 0; i < 4; i++) slow.push(await heldBody(api.base, 8 * 1024 * 1024, holders[i % 2]));
    held.push(...slow);
    await sleep(100);
    for (const conn of slow) conn.send(' '.repeat(25_000));
    await sleep(250);
    expect(api.admission.usage.bodiesInFlight).to.equal(4);
    expect(api.admission.usage.bodyBytesInFlight).to.equal(100_000);
    const token = await api.token();
    // Exactly smallBodyBytes: the small lane; every large place and byte is taken.
    const body = JSON.stringify({ id: 'a', vector: [1, 2] }).padEnd(SMALL, ' ');
    expectOk(await api.post('/vectors/add', { token, body }));
    expect(expectOk(await api.post('/vectors/count', { token, body: {} })).count).to.equal(1);
  });

  it('takes MAX_SMALL_BODIES_IN_FLIGHT small bodies at once: 503 past it, nothing stored', async () => {
    const holders = [await api.token(), await api.token()];
    // Three (the cap) held mid-body: taken.
    for (let i = 0; i < 3; i++) held.push(await heldBody(api.base, SMALL, holders[i % 2]));
    await sleep(100);
    expect(api.admission.usage).to.deep.include({ smallBodiesInFlight: 3, bodiesInFlight: 0 });
    const token = await api.token();
    const refused = expectError(await api.post('/vectors/add', { token, body: { id: 'a', vector: [1, 2] } }), 503, 'SERVER_AT_CAPACITY');
    expect(refused.details).to.deep.equal({ maxSmallBodiesInFlight: 3 });
    // The large bodies' lane is its own.
    const large = JSON.stringify({ id: 'b', vector: [1, 2] }).padEnd(LARGE, ' ');
    expectOk(await api.post('/vectors/add', { token, body: large }));
    held.splice(0).forEach((c) => {
      c.close();
    });
    await sleep(100);
    expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector: [1, 2] } }));
    expect(expectOk(await api.post('/vectors/count', { token, body: {} })).count).to.equal(2);
  });

  it("answers 429 RATE_LIMITED past a token's bodies in flight; other tokens pass", async () => {
    const [mine, other] = [await api.token(), await api.token()];
    for (let i = 0; i < 2; i++) held.push(await heldBody(api.base, 1000, mine));
    await sleep(100);
    expectError(await api.post('/vectors/add', { token: mine, body: { id: 'a', vector: [1, 2] } }), 429, 'RATE_LIMITED');
    expectOk(await api.post('/vectors/add', { token: other, body: { id: 'a', vector: [1, 2] } }));
  });

  it("keys a token's bodies in flight on the token, whatever the spelling of its header", async () => {
    const [mine, other] = [await api.token(), await api.token()];
    // Auth takes the scheme in any case: each spelling used to get slots of its own.
    held.push(await heldBody(api.base, 1000, `bearer ${mine}`), await heldBody(api.base, 1000, `BEARER ${mine}`));
    await sleep(100);
    for (const header of [`Bearer ${mine}`, `bEaReR ${mine}`, `Bearer   ${mine}`, ` bearer\t${mine} `]) {
      expectError(await api.post('/vectors/add', { authorization: header, body: { id: 'a', vector: [1, 2] } }), 429, 'RATE_LIMITED');
    }
    expectOk(await api.post('/vectors/add', { token: other, body: { id: 'a', vector: [1, 2] } }));
    held.splice(0).forEach((c) => {
      c.close();
    });
    await sleep(100);
    expect(expectOk(await api.post('/vectors/count', { token: mine, body: {} })).count).to.equal(0);
  });

  it('counts the bytes of a body as they arrive, not its announced length', async () => {
    // Announced past MAX_BODY_BYTES_IN_FLIGHT, one byte sent: it holds what it sent.
    held.push(await heldBody(api.base, 8 * 1024 * 1024, await api.token(), 1));
    await sleep(250);
    expect(api.admission.usage).to.deep.include({ bodiesInFlight: 1 });
    expect(api.admission.usage.bodyBytesInFlight).to.be.below(1000);
    const { bodiesInFlightBytes } = api.store.budget.usage();
    // The memory budget holds one step ahead of what arrived (arrival.ts), not the 200,000 announced.
    expect(bodiesInFlightBytes).to.equal(BODY_RESERVE_STEP);
    const token = await api.token();
    const body = JSON.stringify({ id: 'a', vector: [1, 2], metadata: { pad: 'x'.repeat(8000) } });
    expectOk(await api.post('/vectors/add', { token, body }));
  });

  it('answers 503 and closes a body once the bytes in flight pass MAX_BODY_BYTES_IN_FLIGHT; stores nothing', async () => {
    const [first, second] = [await api.token(), await api.token()];
    const a = await heldBody(api.base, 200_000, first, 1);
    const b = await heldBody(api.base, 200_000, second, 1);
    held.push(a, b);
    a.send(' '.repeat(60_000));
    await sleep(250);
    // 60,000 of 100,000: taken.
    expect(api.admission.usage.bodyBytesInFlight).to.equal(60_000);
    expect(api.admission.usage.bodiesInFlight).to.equal(2);
    b.send(' '.repeat(45_000));
    // Past the cap: the body whose bytes took the total past it is cut.
    const answer = parseAnswer((await b.answer(3000)).text);
    expect(answer.status).to.equal(503);
    expect(answer.body.error.code).to.equal('SERVER_AT_CAPACITY');
    expect(api.admission.usage).to.deep.equal({ bodiesInFlight: 1, bodyBytesInFlight: 60_000, smallBodiesInFlight: 0 });
    for (const token of [first, second]) expect(expectOk(await api.post('/vectors/count', { token, body: {} })).count).to.equal(0);
  });

  it('cuts a body that sent its start fast and then stalls (the rate holds in every window)', async () => {
    const conn = await heldBody(api.base, 50_000, await api.token(), 1);
    held.push(conn);
    // 20,000 bytes at once: past 2,000 B/s for seconds on average, then nothing.
    conn.send(' '.repeat(20_000));
    const started = Date.now();
    const answer = parseAnswer((await conn.answer(5000)).text);
    expect(answer.status).to.equal(408);
    expect(answer.body.error.code).to.equal('REQUEST_TIMEOUT');
    // Two windows of BODY_GRACE_MS (300 ms) and a check: a rate averaged since the start would wait 10 s.
    expect(Date.now() - started).to.be.below(2000);
  });

  const routes = [
    { path: '/vectors/add', type: 'application/json' },
    // The import reads the request itself (not through jsonBody): the same rule applies.
    { path: '/vectors/import', type: 'application/x-ndjson' },
  ];
  for (const to of routes) {
    it(`cuts a body slower than MIN_BODY_BYTES_PER_SEC with 408 JSON: ${to.path}`, async () => {
      const token = await api.token();
      const conn = await heldBody(api.base, 50_000, token, 1, to);
      const drip = setInterval(() => conn.send(' '), 50);
      const { text, closed } = await conn.answer(5000);
      clearInterval(drip);
      const answer = parseAnswer(text);
      expect(answer.status).to.equal(408);
      expect(answer.body.error.code).to.equal('REQUEST_TIMEOUT');
      expect(closed).to.equal(true);
      expectOk(await api.get('/limits'));
    });
  }

  it('takes MAX_IMPORTS_IN_FLIGHT imports at once: 503 past it, 429 for a second of one token, nothing stored', async () => {
    const ndjson = { path: '/vectors/import', type: 'application/x-ndjson' };
    const [a, b, c] = [await api.token(), await api.token(), await api.token()];
    // Two imports (the cap) held mid-body: both taken.
    held.push(await heldBody(api.base, 10_000, a, 1, ndjson), await heldBody(api.base, 10_000, b, 1, ndjson));
    await sleep(100);
    expect(api.imports.inFlight).to.equal(2);
    const header = { format: 'tempvec-export', version: 1, dimensions: 2, metric: 'cosine', vectorType: 'float32', count: 1 };
    const body = [header, { id: 'x', vector: [1, 2] }].map((r) => JSON.stringify(r)).join('\n');
    const headers = { 'content-type': 'application/x-ndjson' };
    const full = expectError(await api.post('/vectors/import', { token: c, body, headers }), 503, 'SERVER_AT_CAPACITY');
    expect(full.details).to.deep.equal({ maxImportsInFlight: 2 });
    expectError(await api.post('/vectors/import', { token: a, body, headers }), 429, 'RATE_LIMITED');
    expect(expectOk(await api.post('/vectors/count', { token: c, body: {} })).count).to.equal(0);
    held.splice(0).forEach((conn) => {
      conn.close();
    });
    for (let waited = 0; api.imports.inFlight > 0 && waited < 2000; waited += 50) await sleep(50);
    expect(expectOk(await api.post('/vectors/import', { token: c, body, headers })).mutation).to.deep.equal({ added: 1, replaced: 0 });
    expect(expectOk(await api.post('/vectors/import', { token: a, body, headers })).mutation).to.deep.equal({ added: 1, replaced: 0 });
  });

  it('answers headers slower than HEADERS_TIMEOUT_MS with 408 JSON', async () => {
    const conn = rawConnection(api.base);
    await conn.ready;
    conn.send('GET /limits HTTP/1.1\r\nHost: x\r\n');
    const answer = parseAnswer((await conn.answer(5000)).text);
    expect(answer.status).to.equal(408);
    expect(answer.body.error.code).to.equal('REQUEST_TIMEOUT');
  });

  it('answers malformed HTTP with 400 BAD_REQUEST and huge headers with 431 JSON', async () => {
    const bad = rawConnection(api.base);
    await bad.ready;
    bad.send('NOT HTTP AT ALL\r\n\r\n');
    const badAnswer = parseAnswer((await bad.answer()).text);
    expect(badAnswer.status).to.equal(400);
    expect(badAnswer.body.error.code).to.equal('BAD_REQUEST');
    const big = rawConnection(api.base);
    await big.ready;
    big.send(`GET /limits HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const bigAnswer = parseAnswer((await big.answer()).text);
    expect(bigAnswer.status).to.equal(431);
    expect(bigAnswer.body.error.code).to.equal('HEADERS_TOO_LARGE');
  });

  it('stays up through 300 connections against a cap of 100, then serves', async () => {
    const conns: ReturnType<typeof rawConnection>[] = [];
    for (let i = 0; i < 300; i++) conns.push(rawConnection(api.base));
    held.push(...conns);
    await Promise.all(conns.map((c) => Promise.race([c.ready, sleep(2000)])));
    // Past the cap the server closes new connections at once: at most 100 stay open.
    const open = () => conns.filter((c) => !(c.socket.destroyed || c.socket.readableEnded)).length;
    for (let waited = 0; open() > 100 && waited < 5000; waited += 100) await sleep(100);
    expect(open()).to.be.at.most(100);
    held.splice(0).forEach((c) => {
      c.close();
    });
    await sleep(200);
    expectOk(await api.get('/limits'));
  });
});

describe('admission control: large bodies per client address', function () {
  this.timeout(30_000);
  const api = new TestServer({
    maxBodiesInFlight: 10,
    maxBodiesInFlightPerAddress: 2,
    trustProxy: 1,
    bodyGraceMs: 5_000,
    requestRatePerSec: 0,
    tokenRatePerMin: 0,
  });
  before(() => api.start());
  after(() => api.close());

  /** A large body from `address` (X-Forwarded-For), held after its first byte. */
  async function fromAddress(address: string, token: string) {
    const conn = rawConnection(api.base);
    await conn.ready;
    conn.send(
      `POST /vectors/add HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${LARGE}\r\nAuthorization: Bearer ${token}\r\nX-Forwarded-For: ${address}\r\n\r\n{`,
    );
    return conn;
  }

  it('takes MAX_BODIES_IN_FLIGHT_PER_ADDRESS large bodies of one address (IPv6 by /64): 429 past it; other addresses and small bodies pass', async () => {
    const tokens = [await api.token(), await api.token(), await api.token(), await api.token()];
    // Two (the cap) from one /64, on two tokens: taken.
    const held = [await fromAddress('2001:db8::1', tokens[0]), await fromAddress('2001:db8::2', tokens[1])];
    await sleep(100);
    expect(api.admission.usage.bodiesInFlight).to.equal(2);
    try {
      // A third from another address of the same /64, on a fresh token: refused before it is read.
      const refused = parseAnswer((await (await fromAddress('2001:db8:0:0:ffff::3', tokens[2])).answer(3000)).text);
      expect(refused.status).to.equal(429);
      expect(refused.body.error.code).to.equal('RATE_LIMITED');
      expect(refused.body.error.details).to.deep.equal({ maxBodiesInFlightPerAddress: 2 });
      // Another /64 is another address.
      const other = await fromAddress('2001:db8:0:1::1', tokens[2]);
      held.push(other);
      await sleep(100);
      expect(api.admission.usage.bodiesInFlight).to.equal(3);
      // A small body of the full address still passes.
      const small = await api.post('/vectors/add', { token: tokens[3], body: { id: 'a', vector: [1, 2] }, headers: { 'x-forwarded-for': '2001:db8::9' } });
      expectOk(small);
    } finally {
      for (const c of held) c.close();
    }
    await sleep(100);
    const body = JSON.stringify({ id: 'b', vector: [1, 2] }).padEnd(LARGE, ' ');
    expectOk(await api.post('/vectors/add', { token: tokens[3], body, headers: { 'x-forwarded-for': '2001:db8::9' } }));
  });
});
