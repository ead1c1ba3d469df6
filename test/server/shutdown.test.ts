// SIGTERM/SIGINT: stop accepting, finish the requests in flight, then exit 0.
import { expect } from 'chai';
import { request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { startSourceServer } from '../../bench/lib/spawn-server.js';

/** Start a POST whose body is sent in two halves; resolves the response once `finish` is called. */
function slowRequest(url: string, token: string, body: string) {
  const req = request(`${url}/vectors/add`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${token}` },
  });
  const response = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
  });
  const half = Math.floor(body.length / 2);
  req.write(body.slice(0, half));
  return { response, finish: () => req.end(body.slice(half)) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('graceful shutdown', function () {
  this.timeout(30_000);

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`on ${signal} finishes a request in flight, refuses new connections, then exits 0`, async () => {
      const server = await startSourceServer();
      const token = (await (await fetch(`${server.url}/token`, { method: 'POST' })).json()).token;
      // An idle keep-alive connection must not hold the exit up.
      await fetch(`${server.url}/limits`);

      const inFlight = slowRequest(server.url, token, JSON.stringify({ id: 'late', vector: [1, 2, 3] }));
      await sleep(500); // the server has the headers and half the body by now
      server.child.kill(signal);
      await sleep(300);
      expect(server.child.exitCode, 'exited with a request in flight').to.equal(null);
      const refused = await fetch(`${server.url}/limits`).then(
        () => 'answered',
        () => 'refused',
      );
      expect(refused).to.equal('refused');

      inFlight.finish();
      const res = await inFlight.response;
      expect(res.status).to.equal(200);
      expect(res.body.mutation).to.deep.equal({ added: 1, replaced: 0 });
      const started = Date.now();
      expect(await server.exited).to.equal(0);
      expect(Date.now() - started, 'exit waited for a timeout').to.be.below(2000);
      expect(server.output()).to.include(`${signal}: finishing requests in flight`);
    });
  }
});

/** Fill a session with vectors whose get-many answer is about 20 MB (more than socket buffers hold). */
async function bigSession(url: string): Promise<{ token: string; ids: string[] }> {
  const token = (await (await fetch(`${url}/token`, { method: 'POST' })).json()).token;
  const ids = Array.from({ length: 1000 }, (_, i) => `v${i}`);
  const vectors = ids.map((id, i) => ({ id, vector: Array.from({ length: 1024 }, (_, j) => Math.sin(i * 7 + j) + 0.01) }));
  const res = await fetch(`${url}/vectors/add-many`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ vectors }),
  });
  expect(res.status).to.equal(200);
  return { token, ids };
}

/** A get-many whose response is read only once `read()` is called (the socket's buffers fill meanwhile). */
function pausedAnswer(url: string, token: string, ids: string[]) {
  const body = JSON.stringify({ ids });
  const req = request(`${url}/vectors/get-many`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${token}` },
  });
  const started = new Promise<IncomingMessage>((resolve, reject) => {
    req.on('response', (res) => {
      res.pause();
      resolve(res);
    });
    req.on('error', reject);
  });
  req.end(body);
  return {
    started,
    read: async () => {
      const res = await started;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      return new Promise<{ complete: boolean; text: string }>((resolve) => {
        res.on('end', () => resolve({ complete: res.complete, text }));
        res.on('error', () => resolve({ complete: false, text }));
        res.on('aborted', () => resolve({ complete: false, text }));
        res.resume();
      });
    },
  };
}

describe('shutdown with slow clients', function () {
  this.timeout(30_000);

  it('lets a slow reader receive its whole answer, closes idle sockets, exits 0', async () => {
    const server = await startSourceServer({ SHUTDOWN_DRAIN_MS: '8000' });
    const { token, ids } = await bigSession(server.url);
    const slow = pausedAnswer(server.url, token, ids);
    await slow.started;
    // A connection that sent half its headers, and an idle keep-alive one.
    const { hostname, port } = new URL(server.url);
    const half = connect(Number(port), hostname, () => half.write('GET /limits HTTP/1.1\r\nHost: x\r\n'));
    half.on('error', () => {});
    const halfClosed = new Promise((r) => half.on('close', r));
    await fetch(`${server.url}/limits`);
    await sleep(200);
    server.child.kill('SIGTERM');
    await halfClosed;
    await sleep(500);
    const answer = await slow.read();
    expect(answer.complete).to.equal(true);
    expect(JSON.parse(answer.text).vectors).to.have.length(1000);
    expect(await server.exited).to.equal(0);
  });

  it('closes an answer nobody reads after SHUTDOWN_DRAIN_MS and still exits 0', async () => {
    const server = await startSourceServer({ SHUTDOWN_DRAIN_MS: '500' });
    const { token, ids } = await bigSession(server.url);
    const stuck = pausedAnswer(server.url, token, ids);
    await stuck.started;
    const started = Date.now();
    server.child.kill('SIGTERM');
    expect(await server.exited).to.equal(0);
    expect(Date.now() - started).to.be.below(5000);
    expect(server.output()).to.include('SHUTDOWN_DRAIN_MS');
  });
});
