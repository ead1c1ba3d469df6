// Large add / add-many bodies over HTTP: with a Content-Length of 64 KB or
// more they are read into one reused buffer (src/http/body/read-into.ts) and their
// vectors decoded into reused buffers (src/http/body/spare-buffers.ts); without one
// (chunked) raw-body reads them. Either way the stored vectors are exact, a
// later request never changes an earlier one's, and a body that ends early
// is answered as raw-body answers it.
import { expect } from 'chai';
import { connect } from 'node:net';
import { encodeFloat32Base64 } from '../../src/schemas/base64-float32.js';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { randomVectors, seededRng } from '../helpers/random.js';

const DIM = 64;
const COUNT = 400;

/** An add-many body of `count` vectors with ids `${prefix}i`, as base64 or JSON numbers. */
function batch(prefix: string, vectors: number[][], base64: boolean): string {
  return JSON.stringify({ vectors: vectors.map((v, i) => ({ id: `${prefix}${i}`, vector: base64 ? encodeFloat32Base64(v) : v })) });
}

/** Send `body` as a chunked request (no Content-Length), in pieces. */
async function postChunked(base: string, path: string, token: string, body: string) {
  const bytes = Buffer.from(body);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 50_000) controller.enqueue(bytes.subarray(at, at + 50_000));
      controller.close();
    },
  });
  const res = await fetch(base + path, {
    method: 'POST',
    body: stream,
    duplex: 'half',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  } as RequestInit);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The answer to a request that announces `announced` bytes, sends `sent` of them and half-closes the socket. */
function postShort(base: string, token: string, announced: number, sent: number): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
    });
    socket.on('end', () => resolve(answer));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.write(
      `POST /vectors/add-many HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\n` +
        `authorization: Bearer ${token}\r\ncontent-length: ${announced}\r\n\r\n`,
    );
    socket.end(Buffer.alloc(sent, 0x20));
  });
}

/** Status line and JSON error of a raw HTTP answer (headers such as Date differ between answers). */
function errorOf(answer: string) {
  const status = answer.split('\r\n')[0];
  const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
  const json = body === '' ? null : JSON.parse(body.slice(body.indexOf('{'), body.lastIndexOf('}') + 1));
  return { status, code: json?.error?.code, message: json?.error?.message };
}

describe('large add-many bodies (read into reused buffers)', () => {
  const api = useServer();
  const rng = seededRng(404);
  const first = randomVectors(rng, COUNT, DIM);
  const second = randomVectors(rng, COUNT, DIM);

  async function stored(token: string, prefix: string, count: number) {
    const res = expectOk(await api.post('/vectors/get-many', { token, body: { ids: Array.from({ length: count }, (_, i) => `${prefix}${i}`) } }));
    // Read back as the shortest decimal of each float32: rounding it again gives the stored float32.
    return res.vectors.map((v: { vector: number[] }) => v.vector.map(Math.fround));
  }
  const asFloat32 = (vectors: number[][]) => vectors.map((v) => Array.from(Float32Array.from(v)));

  it('stores base64 and number batches exactly; later batches change nothing', async () => {
    const token = await api.token();
    for (const base64 of [true, false]) {
      const body = batch(base64 ? 'a' : 'j', first, base64);
      expect(body.length).to.be.greaterThan(64 * 1024);
      expectOk(await api.post('/vectors/add-many', { token, body }));
    }
    // The next batches reuse the buffers the first ones were read and decoded into.
    expectOk(await api.post('/vectors/add-many', { token, body: batch('b', second, true) }));
    expectOk(await api.post('/vectors/add-many', { token, body: batch('k', second, false) }));
    expect(await stored(token, 'a', COUNT)).to.deep.equal(asFloat32(first));
    expect(await stored(token, 'j', COUNT)).to.deep.equal(asFloat32(first));
    expect(await stored(token, 'b', COUNT)).to.deep.equal(asFloat32(second));
    expect(await stored(token, 'k', COUNT)).to.deep.equal(asFloat32(second));
  });

  it('stores the same vectors from batches sent at the same time to several sessions', async () => {
    const tokens = await Promise.all([0, 1, 2, 3].map(() => api.token()));
    const data = tokens.map((_, s) => (s % 2 === 0 ? first : second));
    const replies = await Promise.all(tokens.map((token, s) => api.post('/vectors/add-many', { token, body: batch('c', data[s], s < 2) })));
    replies.forEach((res) => {
      expectOk(res);
    });
    for (let s = 0; s < tokens.length; s++) expect(await stored(tokens[s], 'c', COUNT)).to.deep.equal(asFloat32(data[s]));
  });

  it('stores the same vectors from a chunked body without Content-Length', async () => {
    const token = await api.token();
    const res = await postChunked(api.base, '/vectors/add-many', token, batch('x', first, true));
    expect(res.status, res.text).to.equal(200);
    expect(res.headers.get('content-length')).to.not.equal(null);
    expect(await stored(token, 'x', COUNT)).to.deep.equal(asFloat32(first));
  });

  it('answers a body cut short as a small one, and goes on serving', async () => {
    const token = await api.token();
    const large = errorOf(await postShort(api.base, token, 200_000, 100_000));
    const small = errorOf(await postShort(api.base, token, 2_000, 1_000));
    expect(large).to.deep.equal(small);
    expect(large.status).to.match(/^HTTP\/1\.1 4\d\d /);
    // The server is still serving, and the buffers of the cut request are fine to reuse.
    expectOk(await api.post('/vectors/add-many', { token, body: batch('z', second, true) }));
    expect(await stored(token, 'z', COUNT)).to.deep.equal(asFloat32(second));
  });
});

describe('large bodies near MAX_BODY_BYTES', () => {
  const api = useServer({ maxBodyBytes: 150_000 });
  const rng = seededRng(405);

  it('takes a body just under the limit, answers 413 just over it', async () => {
    const token = await api.token();
    const vectors = randomVectors(rng, 500, DIM);
    const under = batch('u', vectors.slice(0, 300), true);
    const over = batch('o', vectors, true);
    expect(under.length).to.be.within(64 * 1024, 150_000);
    expect(over.length).to.be.greaterThan(150_000);
    expectOk(await api.post('/vectors/add-many', { token, body: under }));
    const error = expectError(await api.post('/vectors/add-many', { token, body: over }), 413, 'PAYLOAD_TOO_LARGE');
    expect(error.details).to.deep.equal({ limit: 150_000 });
  });
});
