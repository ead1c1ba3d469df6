// Isolation: a token reaches its own session's data and nothing else, on
// every authenticated route; anything that is not exactly a live token is 401.
import { expect } from 'chai';
import { hashToken } from '../../src/sessions/token.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';

const IMPORT_BODY =
  '{"format":"tempvec-export","version":1,"dimensions":3,"metric":"cosine","vectorType":"float32","count":1}\n{"id":"a1","vector":[7,7,7],"metadata":{"owner":"B"}}\n';

/** Every authenticated route with a body aimed at the other session's ids (and, for NDJSON, how to send it). */
const mcpCall = (id: number, method: string, params: unknown) => ({ jsonrpc: '2.0', id, method, params });
const MCP_BATCH = JSON.stringify([
  mcpCall(1, 'tools/call', { name: 'recall', arguments: { query: 'owner A', mode: 'keywords', topK: 100 } }),
  mcpCall(2, 'tools/call', { name: 'list_memories', arguments: { limit: 1000 } }),
  mcpCall(3, 'tools/call', { name: 'forget', arguments: { ids: ['a1', 'a2'] } }),
  mcpCall(4, 'tools/call', { name: 'forget', arguments: { filter: { owner: 'A' } } }),
  mcpCall(5, 'tools/call', { name: 'remember', arguments: { texts: ['mine now'], ids: ['a1'] } }),
  mcpCall(6, 'tools/call', { name: 'memory_stats', arguments: {} }),
  mcpCall(7, 'resources/read', { uri: 'tempvec://record/a1' }),
  mcpCall(8, 'resources/list', {}),
]);
const ROUTES: [method: string, path: string, body?: unknown, extra?: { raw: string; headers: Record<string, string> }][] = [
  ['GET', '/session'],
  ['POST', '/index/reset'],
  ['POST', '/vectors/has', { id: 'a1' }],
  ['POST', '/vectors/get', { id: 'a1' }],
  ['POST', '/vectors/get-many', { ids: ['a1', 'a2'] }],
  ['POST', '/vectors/metadata/get', { id: 'a1' }],
  ['POST', '/vectors/metadata/set', { id: 'a1', metadata: { owner: 'B' } }],
  ['POST', '/vectors/metadata/delete', { id: 'a1' }],
  ['POST', '/vectors/add', { id: 'a1', vector: [9, 9, 9], metadata: { owner: 'B' } }],
  ['POST', '/vectors/add-many', { vectors: [{ id: 'a2', vector: [8, 8, 8], metadata: { owner: 'B' } }] }],
  ['POST', '/vectors/delete', { id: 'a1' }],
  ['POST', '/vectors/delete-many', { ids: ['a1', 'a2'] }],
  ['POST', '/vectors/clear'],
  ['POST', '/search', { queryVector: [1, 0, 0], topK: 100, includeMetadata: true }],
  [
    'POST',
    '/search-many',
    {
      queryVectors: [
        [1, 0, 0],
        [0, 1, 0],
      ],
      topK: 100,
      includeMetadata: true,
    },
  ],
  ['POST', '/vectors/count', { filter: { owner: 'A' } }],
  ['POST', '/vectors/facet', { path: 'owner' }],
  ['POST', '/vectors/touch', { ids: ['a1', 'a2'] }],
  ['POST', '/embed', { texts: ['a text'] }],
  ['POST', '/vectors/list', { limit: 1000, includeVectors: true, includeMetadata: true }],
  ['POST', '/vectors/metadata/patch', { id: 'a1', patch: { owner: 'B' } }],
  ['GET', '/vectors/export'],
  ['POST', '/vectors/import', undefined, { raw: IMPORT_BODY, headers: { 'content-type': 'application/x-ndjson' } }],
  // Every MCP tool and resource B could aim at A's records, as one JSON-RPC batch.
  ['POST', '/mcp', undefined, { raw: MCP_BATCH, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }],
];

/** The API's error code: the envelope's, or for POST /mcp the JSON-RPC error's data (src/http/routes/mcp.ts). */
const apiCode = (res: { body: { error: { code: unknown; data?: { code: string } } } }) => res.body.error.data?.code ?? res.body.error.code;

const flip = (c: string) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase());
/** The token with the case of its first letter flipped (base64url is case-sensitive). */
function recased(token: string): string {
  const i = token.search(/[A-Za-z]/);
  return token.slice(0, i) + flip(token[i]) + token.slice(i + 1);
}

describe('session isolation', () => {
  let live: LiveApp;
  let tokenA: string;
  let sessionIdA: string;

  /** What session A holds, read through its own token. */
  async function snapshotA() {
    const many = await live.send('POST', '/vectors/get-many', { token: tokenA, body: { ids: ['a1', 'a2', 'b1'] } });
    const session = await live.send('GET', '/session', { token: tokenA });
    const search = await live.send('POST', '/search', { token: tokenA, body: { queryVector: [1, 1, 1], topK: 10, includeMetadata: true } });
    return {
      vectors: many.body.vectors,
      notFound: many.body.notFound,
      count: session.body.session.vectorCount,
      config: session.body.session.config,
      updatedAt: session.body.session.updatedAt,
      results: search.body.results,
    };
  }

  beforeEach(async () => {
    live = await startApp();
    tokenA = await live.newToken();
    const add = await live.send('POST', '/vectors/add-many', {
      token: tokenA,
      body: {
        metric: 'l2',
        vectors: [
          { id: 'a1', vector: [1, 2, 3], metadata: { owner: 'A' } },
          { id: 'a2', vector: [3, 2, 1], metadata: { owner: 'A' } },
        ],
      },
    });
    expect(add.status).to.equal(200);
    sessionIdA = add.body.session.sessionId;
  });

  afterEach(() => live.close());

  it("lets no route used with another token read, change or list session A's vectors", async () => {
    const before = await snapshotA();
    for (const [method, path, body, extra] of ROUTES) {
      // A fresh session B for each route, holding one vector of its own with the same dimension.
      const tokenB = await live.newToken();
      await live.send('POST', '/vectors/add', { token: tokenB, body: { id: 'b1', vector: [1, 0, 0], metadata: { owner: 'B' } } });
      const res = await live.send(method, path, { token: tokenB, body, ...extra });
      expect(res.status, `${method} ${path}`).to.be.oneOf([200, 404]);
      // The raw text: the export's NDJSON too.
      const text = res.text;
      expect(text, `${method} ${path} leaks A's metadata`).not.to.include('"owner":"A"');
      expect(text, `${method} ${path} leaks A's sessionId`).not.to.include(sessionIdA);
      if (res.body?.session) expect(res.body.session.sessionId).not.to.equal(sessionIdA);
      expect(await snapshotA(), `A changed after ${method} ${path} by B`).to.deep.equal(before);
    }
  });

  it("covers every route that needs a token (the router's own list, from GET /)", async () => {
    const listed = (await live.send('GET', '/', { headers: { accept: 'application/json' } })).body.routes as { method: string; path: string }[];
    const needsToken: string[] = [];
    for (const { method, path } of listed) {
      if ((await live.send(method, path, { body: method === 'POST' ? {} : undefined })).status === 401) needsToken.push(`${method} ${path}`);
    }
    expect(needsToken.sort()).to.deep.equal(ROUTES.map(([method, path]) => `${method} ${path}`).sort());
  });

  it("answers B's reads of A's ids as not found", async () => {
    const tokenB = await live.newToken();
    expect((await live.send('POST', '/vectors/has', { token: tokenB, body: { id: 'a1' } })).body.has).to.equal(false);
    expect((await live.send('POST', '/vectors/get', { token: tokenB, body: { id: 'a1' } })).body.error.code).to.equal('VECTOR_NOT_FOUND');
    expect((await live.send('POST', '/vectors/get-many', { token: tokenB, body: { ids: ['a1'] } })).body.notFound).to.deep.equal(['a1']);
  });

  describe('tokens that are not exactly a live token', () => {
    const badAuthorizations: [string, (token: string, sessionId: string) => string][] = [
      ['a well-formed token no session owns', () => 'Bearer ' + 'x'.repeat(43)],
      ['a truncated token', (t) => `Bearer ${t.slice(0, -1)}`],
      ['a token cut in half', (t) => `Bearer ${t.slice(0, 21)}`],
      ['a token padded with "="', (t) => `Bearer ${t}=`],
      ['a token with an extra character', (t) => `Bearer ${t}A`],
      ['a differently cased token', (t) => `Bearer ${recased(t)}`],
      ['an upper-cased token', (t) => `Bearer ${t.toUpperCase()}`],
      ['a token without "Bearer"', (t) => t],
      ['a token under another scheme', (t) => `Basic ${t}`],
      ['the sessionId in place of the token', (_t, id) => `Bearer ${id}`],
      ["the token's SHA-256 in place of the token", (t) => `Bearer ${hashToken(t)}`],
      ['an empty bearer', () => 'Bearer '],
      ['two tokens', (t) => `Bearer ${t} ${t}`],
    ];

    for (const [name, make] of badAuthorizations) {
      it(`answers 401 to ${name} on every route and changes nothing`, async () => {
        const before = await snapshotA();
        for (const [method, path, body] of ROUTES) {
          const res = await live.send(method, path, { authorization: make(tokenA, sessionIdA), body });
          expect(res.status, `${method} ${path}`).to.equal(401);
          if (path !== '/mcp') expect(res.body.success).to.equal(false);
          expect(apiCode(res)).to.be.oneOf(['UNAUTHORIZED', 'INVALID_TOKEN']);
          expect(res.headers.get('www-authenticate')).to.match(/^Bearer /);
          expect(JSON.stringify(res.body)).not.to.include('"owner":"A"');
        }
        expect(await snapshotA()).to.deep.equal(before);
      });
    }

    it('answers 401 without any Authorization header on every route', async () => {
      for (const [method, path, body] of ROUTES) {
        const res = await live.send(method, path, { body });
        expect(res.status, `${method} ${path}`).to.equal(401);
        expect(apiCode(res)).to.equal('UNAUTHORIZED');
      }
    });

    it('answers 401 to a well-formed unknown token; a fresh token still works', async () => {
      const fresh = await live.newToken();
      const stranger = recased(fresh); // same shape, different secret
      expect((await live.send('GET', '/session', { token: stranger })).status).to.equal(401);
      expect((await live.send('GET', '/session', { token: fresh })).status).to.equal(200);
    });
  });
});
