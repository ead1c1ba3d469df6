// SIGTERM/SIGINT: stop accepting, finish the requests in flight, then exit 0.
import { expect } from 'chai';
import { request } from 'node:http';
import { startServer } from '../helpers/server-process.js';

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
      const server = await startServer();
      const token = (await (await fetch(`${server.url}/token`, { method: 'POST' })).json()).token;
      // An idle keep-alive connection must not hold the exit up.
      await fetch(`${server.url}/limits`);

      const inFlight = slowRequest(server.url, token, JSON.stringify({ id: 'late', vector: [1, 2, 3] }));
      await sleep(500); // the server has the headers and half the body by now
      server.child.kill(signal);
      await sleep(300);
      expect(server.child.exitCode, 'exited with a request in flight').to.equal(null);
      const refused = await fetch(`${server.url}/limits`).then(() => 'answered', () => 'refused');
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
