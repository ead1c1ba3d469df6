// POST /mcp driven by the MCP SDK's own Client over StreamableHTTPClientTransport
// against a live server: the tools' schemas are the routes' (bounds and
// fields), remember/recall/forget/list/stats answer what the HTTP routes answer
// for the same session (recall: the ids and scores of POST /search with the
// same options), bad arguments are tool errors with the API's code, a missing
// or expired token is refused with a message naming POST /token, and two
// tokens never see each other's memories.
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SPEC_LIMITS } from '../../src/config.js';
import { hitsBytes } from '../../src/http/answer-size.js';
import { toOpenApiSchema } from '../../src/openapi/json-schema.js';
import { requestSchemas } from '../../src/schemas/index.js';
import { expectOk, useServer } from '../helpers/http.js';
import { ManualClock } from '../helpers/clock.js';

const DOCS = [
  { id: 'cat', text: 'The cat sleeps on the warm windowsill.', metadata: { kind: 'animal', step: 1 } },
  { id: 'dog', text: 'A dog barks at the postman every morning.', metadata: { kind: 'animal', step: 2 } },
  { id: 'stocks', text: 'Stock markets fell sharply after the announcement.', metadata: { kind: 'money', step: 3 } },
  { id: 'rain', text: 'Heavy rain is expected across the north tomorrow.', metadata: { kind: 'weather', step: 4 } },
  { id: 'bread', text: 'Knead the dough and let the bread rise for an hour.', metadata: { kind: 'food', step: 5 } },
  { id: 'storm', text: 'A storm with strong winds will reach the coast tonight.', metadata: { kind: 'weather', step: 6 } },
];
const QUERIES = ['will it rain tomorrow', 'pets at home', 'baking bread', 'the weather and the markets'];

type Json = Record<string, any>;

describe('POST /mcp (the SDK client against a live server)', function () {
  this.timeout(120_000);
  const clock = new ManualClock(Date.now());
  const api = useServer({ embeddingThreads: 1 }, clock.now);
  const clients: Client[] = [];

  async function connect(token?: string): Promise<Client> {
    const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
    const transport = new StreamableHTTPClientTransport(new URL(`${api.base}/mcp`), { requestInit: { headers } });
    const client = new Client({ name: 'mcp-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  async function call(client: Client, name: string, args: Json = {}): Promise<CallToolResult & { structuredContent: Json }> {
    return (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: Json };
  }

  async function ok(client: Client, name: string, args: Json = {}): Promise<Json> {
    const result = await call(client, name, args);
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
    return result.structuredContent;
  }

  async function toolError(client: Client, name: string, args: Json) {
    const result = await call(client, name, args);
    expect(result.isError, JSON.stringify(result)).to.equal(true);
    const { error } = result.structuredContent;
    expect((result.content as { text: string }[])[0].text)
      .to.contain(error.code)
      .and.contain(error.message);
    return error as { code: string; status: number; message: string; details?: Json };
  }

  async function remembered(): Promise<{ token: string; client: Client }> {
    const token = await api.token();
    const client = await connect(token);
    await ok(client, 'remember', { texts: DOCS.map((d) => d.text), ids: DOCS.map((d) => d.id), metadata: DOCS.map((d) => d.metadata) });
    return { token, client };
  }

  after(async () => {
    for (const client of clients) await client.close();
  });

  it('lists the five tools, each schema built from its route: the same fields less those the tool fixes, the same bounds', async () => {
    const client = await connect(await api.token());
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(Object.keys(byName).sort()).to.deep.equal(['forget', 'list_memories', 'memory_stats', 'recall', 'remember']);
    for (const tool of tools) {
      expect(tool.inputSchema.type).to.equal('object');
      expect(tool.description!.length).to.be.greaterThan(40);
      expect(JSON.stringify(tool.inputSchema)).not.to.contain('x-checks').and.not.to.contain('$ref');
    }
    const routes = requestSchemas(api.config);
    const searchFields = Object.keys(toOpenApiSchema(routes.SearchRequestSchema, {}).properties!);
    const recall = byName.recall.inputSchema as Json;
    const fixed = ['queryVector', 'queryId', 'queryText', 'includeMetadata', 'includeText'];
    expect(Object.keys(recall.properties).sort()).to.deep.equal([...searchFields.filter((f) => !fixed.includes(f)), 'query', 'mode'].sort());
    expect(recall.required).to.deep.equal(['query']);
    expect(recall.properties.topK).to.include({ minimum: SPEC_LIMITS.minTopK, maximum: SPEC_LIMITS.maxTopK, default: SPEC_LIMITS.defaultTopK });
    expect(recall.properties.query.description).to.be.a('string');
    const remember = byName.remember.inputSchema as Json;
    expect(remember.required).to.deep.equal(['texts']);
    const recordFields = Object.keys(toOpenApiSchema(routes.ImportRecordSchema, {}).properties!);
    const perText = ['id', 'vector', 'text', 'metadata'];
    expect(Object.keys(remember.properties).sort()).to.deep.equal([...recordFields.filter((f) => !perText.includes(f)), 'texts', 'ids', 'metadata'].sort());
    expect(remember.properties.texts).to.include({ minItems: 1, maxItems: api.config.maxAddManyBatch });
    const { type, minLength, maxLength } = toOpenApiSchema(routes.ImportRecordSchema, {}).properties!.id as Json;
    expect(remember.properties.ids.items).to.include({ type, minLength, maxLength });
    const forget = byName.forget.inputSchema as Json;
    expect(forget.oneOf).to.deep.equal([{ required: ['ids'] }, { required: ['filter'] }]);
    expect(Object.keys(byName.list_memories.inputSchema.properties!).sort()).to.deep.equal(['cursor', 'filter', 'limit']);
    expect(byName.memory_stats.inputSchema.properties).to.deep.equal({});
  });

  it('recall answers the ids, scores, texts and metadata POST /search answers with the same options (hybrid, meaning, keywords, filter, fusion)', async () => {
    const { token, client } = await remembered();
    const cases: { args: Json; body: (q: string) => Json }[] = [
      { args: {}, body: (q) => ({ queryVector: { text: q }, queryText: q }) },
      { args: { mode: 'meaning', topK: 3 }, body: (q) => ({ queryVector: { text: q }, topK: 3 }) },
      { args: { mode: 'keywords' }, body: (q) => ({ queryText: q }) },
      {
        args: { filter: { kind: 'weather' }, fusion: { method: 'linear', alpha: 0.3 } },
        body: (q) => ({ queryVector: { text: q }, queryText: q, filter: { kind: 'weather' }, fusion: { method: 'linear', alpha: 0.3 } }),
      },
    ];
    for (const { args, body } of cases) {
      for (const query of QUERIES) {
        const { results } = await ok(client, 'recall', { query, ...args });
        const search = expectOk(await api.post('/search', { token, body: { ...body(query), includeMetadata: true, includeText: true } }));
        const expected = search.results.map((hit: Json) => ({ id: hit.id, score: hit.score, text: hit.text, metadata: hit.metadata ?? null }));
        expect(results, `${query} ${JSON.stringify(args)}`).to.deep.equal(expected);
      }
    }
    // Its answer is held in the memory budget while it is made and sent, then given back.
    const budget = api.store.budget;
    const reserve = budget.reserve.bind(budget);
    const reserved: number[] = [];
    budget.reserve = (kind, bytes, message) => {
      if (kind === 'answers') reserved.push(bytes);
      return reserve(kind, bytes, message);
    };
    let text: string;
    try {
      text = ((await call(client, 'recall', { query: 'rain tomorrow', topK: 1 })).content as { text: string }[])[0].text;
    } finally {
      budget.reserve = reserve;
    }
    expect(reserved).to.have.length(1);
    expect(reserved[0]).to.be.greaterThan(2 * Buffer.byteLength(DOCS[3].text));
    expect(budget.usage().answersInFlightBytes).to.equal(0);
    expect(text).to.contain('rain').and.contain(DOCS[3].text).and.contain('"kind":"weather"');
  });

  it('recall takes the search stages (mmr, groupBy) and remember a ttlMs, as POST /search and add-many take them', async () => {
    const { token, client } = await remembered();
    const stages: { args: Json; key: 'results' | 'groups' }[] = [
      { args: { mode: 'meaning', topK: 3, mmr: { diversity: 0.7 } }, key: 'results' },
      { args: { mode: 'meaning', topK: 2, groupBy: { path: 'kind', size: 2 } }, key: 'groups' },
    ];
    const asMemory = (hit: Json) => ({
      id: hit.id,
      score: hit.score,
      ...(hit.mmrRank ? { mmrRank: hit.mmrRank } : {}),
      text: hit.text,
      metadata: hit.metadata ?? null,
    });
    for (const { args, key } of stages) {
      const { mode: _, ...options } = args;
      const answer = await ok(client, 'recall', { query: QUERIES[0], ...args });
      const search = expectOk(
        await api.post('/search', { token, body: { queryVector: { text: QUERIES[0] }, ...options, includeMetadata: true, includeText: true } }),
      );
      const expected =
        key === 'results' ? search.results.map(asMemory) : search.groups.map((group: Json) => ({ value: group.value, results: group.hits.map(asMemory) }));
      expect(answer[key], JSON.stringify(args)).to.deep.equal(expected);
    }
    await ok(client, 'remember', { texts: ['a note that goes away'], ids: ['brief'], ttlMs: 60_000 });
    const stored = expectOk(await api.post('/vectors/get', { token, body: { id: 'brief' } }));
    expect(stored.vector.ttlMs).to.equal(60_000);
  });

  it('remember gives new ids when none are given, stores each text embedded with its metadata; forget by ids and by filter', async () => {
    const token = await api.token();
    const client = await connect(token);
    const { ids, mutation } = await ok(client, 'remember', { texts: ['first note', 'second note'], metadata: [{ n: 1 }, { n: 2 }] });
    expect(ids).to.have.length(2);
    expect(new Set(ids).size).to.equal(2);
    expect(mutation).to.deep.equal({ added: 2, replaced: 0 });
    const { vectors, session } = expectOk(await api.post('/vectors/get-many', { token, body: { ids, includeText: true } }));
    expect(vectors.map((v: Json) => [v.text, v.metadata])).to.deep.equal([
      ['first note', { n: 1 }],
      ['second note', { n: 2 }],
    ]);
    expect(session.config).to.include({ embedding: 'use-lite-512', dimensions: 512 });
    const again = await ok(client, 'remember', { texts: ['first note, revised'], ids: [ids[0]] });
    expect(again).to.deep.equal({ ids: [ids[0]], mutation: { added: 0, replaced: 1 } });
    expect((await ok(client, 'forget', { filter: { n: 2 } })).mutation).to.include({ deleted: 1 });
    expect((await ok(client, 'forget', { ids: [ids[0], 'never-stored'] })).mutation).to.deep.equal({ deleted: 1, notFound: ['never-stored'] });
    expect(expectOk(await api.post('/vectors/count', { token, body: {} })).count).to.equal(0);
  });

  it('list_memories pages through what POST /vectors/list lists, texts and metadata; memory_stats reports the session', async () => {
    const { token, client } = await remembered();
    const seen: Json[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok(client, 'list_memories', { limit: 4, ...(cursor ? { cursor } : {}) });
      seen.push(...page.memories);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    const listed = expectOk(await api.post('/vectors/list', { token, body: { limit: 100, includeText: true, includeMetadata: true } })).vectors;
    expect(seen).to.deep.equal(listed.map((v: Json) => ({ id: v.id, text: v.text, metadata: v.metadata ?? null })));
    const weather = await ok(client, 'list_memories', { filter: { kind: 'weather' } });
    expect(weather.memories.map((m: Json) => m.id)).to.deep.equal(['rain', 'storm']);
    const stats = await ok(client, 'memory_stats');
    const { session } = expectOk(await api.get('/session', { token }));
    expect(stats).to.include({ memories: DOCS.length, maxMemories: session.maxVectors, model: 'use-lite-512', expiresAt: session.expiresAt });
    expect(stats.stats.textBytes).to.be.greaterThan(0);
  });

  it('reads each record as the resource tempvec://record/{id}, lists them, and names the template', async () => {
    const { client } = await remembered();
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).to.deep.equal(['tempvec://record/{id}']);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).to.deep.equal(DOCS.map((d) => `tempvec://record/${d.id}`));
    const read = await client.readResource({ uri: 'tempvec://record/rain' });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).to.deep.equal({ id: 'rain', text: DOCS[3].text, metadata: DOCS[3].metadata });
    const missing = await client.readResource({ uri: 'tempvec://record/nothing' }).catch((err: unknown) => err);
    expect(missing).to.be.instanceOf(McpError);
    expect((missing as McpError).code).to.equal(-32002);
  });

  it('answers a bad argument with a tool error carrying the API code and the path of the argument; an unknown tool is a protocol error', async () => {
    const { client } = await remembered();
    const topK = await toolError(client, 'recall', { query: 'rain', topK: 0 });
    expect(topK).to.include({ code: 'VALIDATION_ERROR', status: 400 });
    expect(topK.details!.issues[0].path).to.equal('/topK');
    expect((await toolError(client, 'recall', { query: 'rain', includeText: false })).code).to.equal('VALIDATION_ERROR');
    expect((await toolError(client, 'recall', {})).details!.issues[0].path).to.equal('/query');
    const lengths = await toolError(client, 'remember', { texts: ['a', 'b'], ids: ['x'] });
    expect(lengths.code).to.equal('VALIDATION_ERROR');
    expect(lengths.message).to.contain('ids must hold one entry per text');
    const item = await toolError(client, 'remember', { texts: ['a', 'b'], metadata: [{}, [1]] });
    expect(item.details!.issues[0].path).to.equal('/metadata/1');
    const many = Array.from({ length: api.config.maxAddManyBatch + 1 }, (_, i) => `text ${i}`);
    expect((await toolError(client, 'remember', { texts: many })).code).to.equal('BATCH_TOO_LARGE');
    expect((await toolError(client, 'forget', { ids: ['cat'], filter: { kind: 'animal' } })).code).to.equal('VALIDATION_ERROR');
    expect((await toolError(client, 'forget', { filter: {} })).code).to.equal('VALIDATION_ERROR');
    expect((await toolError(client, 'list_memories', { cursor: 'not-a-cursor' })).status).to.equal(400);
    expect((await toolError(client, 'memory_stats', { extra: 1 })).code).to.equal('VALIDATION_ERROR');
    const unknown = await client.callTool({ name: 'nope', arguments: {} }).catch((err: unknown) => err);
    expect(unknown).to.be.instanceOf(McpError);
    expect(expectOk(await api.get('/session', { token: await api.token() })).session.vectorCount).to.equal(0);
  });

  it('takes metadata as deep as MAX_JSON_DEPTH allows, in a batch too; one level deeper is a tool error at its path', async () => {
    const token = await api.token();
    const client = await connect(token);
    const nested = (levels: number) => {
      let m: Json = { leaf: 1 };
      for (let d = 1; d < levels; d++) m = { d: m };
      return m;
    };
    const deepest = nested(api.config.maxJsonDepth);
    expect((await ok(client, 'remember', { texts: ['deep one'], ids: ['deep'], metadata: [deepest] })).ids).to.deep.equal(['deep']);
    const call = (id: number, metadata: Json) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'remember', arguments: { texts: ['x'], ids: [`b${id}`], metadata: [metadata] } },
    });
    const batch = await api.post('/mcp', { token, headers: { accept: 'application/json, text/event-stream' }, body: [call(1, deepest), call(2, deepest)] });
    expect(batch.status).to.equal(200);
    expect(batch.body.map((m: Json) => m.result.isError ?? false)).to.deep.equal([false, false]);
    const tooDeep = await toolError(client, 'remember', { texts: ['deeper'], metadata: [nested(api.config.maxJsonDepth + 1)] });
    expect(tooDeep.code).to.equal('VALIDATION_ERROR');
    expect(tooDeep.details!.issues[0].path).to.match(/^\/metadata\/0\/d/);
    expect(expectOk(await api.post('/vectors/count', { token, body: {} })).count).to.equal(3);
  });

  it('answers errors of the session as tool errors: recall by meaning in a session of given vectors is NO_EMBEDDING_MODEL, by keywords it works', async () => {
    const token = await api.token();
    expectOk(await api.post('/vectors/add', { token, body: { id: 'v', vector: [1, 0, 0], text: 'a keyword here' } }));
    const client = await connect(token);
    expect((await toolError(client, 'recall', { query: 'keyword' })).code).to.equal('NO_EMBEDDING_MODEL');
    expect((await toolError(client, 'remember', { texts: ['more'] })).code).to.equal('NO_EMBEDDING_MODEL');
    expect((await ok(client, 'recall', { query: 'keyword', mode: 'keywords' })).results.map((r: Json) => r.id)).to.deep.equal(['v']);
  });

  it('refuses a missing, unknown or expired token with 401 and a JSON-RPC error that says to get one with POST /token', async () => {
    const none = await connect().catch((err: unknown) => err as Error);
    expect(none).to.be.instanceOf(Error);
    expect((none as Error).message)
      .to.contain('401')
      .and.contain('POST /token');
    const raw = await api.post('/mcp', {
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(raw.status).to.equal(401);
    expect(raw.body).to.deep.include({ jsonrpc: '2.0', id: null });
    expect(raw.body.error).to.include({ code: -32000 });
    expect(raw.body.error.message).to.contain('UNAUTHORIZED').and.contain('POST /token');
    expect(raw.body.error.data).to.include({ code: 'UNAUTHORIZED', status: 401 });
    const unknown = await api.post('/mcp', { authorization: 'Bearer nope', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(unknown.status).to.equal(401);
    expect(unknown.body.error.message).to.contain('POST /token');
    const token = await api.token();
    const client = await connect(token);
    await ok(client, 'memory_stats');
    clock.advance(api.config.sessionTtlMs + 1);
    const expired = await client.callTool({ name: 'memory_stats', arguments: {} }).catch((err: unknown) => err as Error);
    expect(expired).to.be.instanceOf(Error);
    expect((expired as Error).message)
      .to.contain('401')
      .and.contain('SESSION_EXPIRED')
      .and.contain('POST /token');
  });

  it("takes a body of up to the spec's maxMcpBodyBytes (below MAX_BODY_BYTES) and answers 413 one byte past it", async () => {
    const token = await api.token();
    expect((await api.get('/limits')).body.limits.mcp).to.deep.equal({
      maxBodyBytes: SPEC_LIMITS.maxMcpBodyBytes,
      maxAnswerBytes: api.config.maxMcpAnswerBytes,
    });
    expect(api.config.maxBodyBytes).to.be.greaterThan(SPEC_LIMITS.maxMcpBodyBytes);
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'memory_stats', arguments: {} } };
    const sized = (bytes: number) => JSON.stringify(call) + ' '.repeat(bytes - JSON.stringify(call).length);
    const headers = { accept: 'application/json, text/event-stream' };
    expect((await api.post('/mcp', { token, headers, body: sized(SPEC_LIMITS.maxMcpBodyBytes) })).status).to.equal(200);
    const past = await api.post('/mcp', { token, headers, body: sized(SPEC_LIMITS.maxMcpBodyBytes + 1) });
    expect(past.status).to.equal(413);
    expect(past.body.error.data).to.deep.include({ code: 'PAYLOAD_TOO_LARGE', details: { limit: SPEC_LIMITS.maxMcpBodyBytes } });
  });

  it('answers as the SDK transport does: 406, 400 for a version or a message it does not know, 202 for notifications, a batch as an array under the client ids', async () => {
    const token = await api.token();
    const accept = { accept: 'application/json, text/event-stream' };
    const list = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
    const noSse = await api.post('/mcp', { token, headers: { accept: 'application/json' }, body: list(1) });
    expect([noSse.status, noSse.body.error.code]).to.deep.equal([406, -32000]);
    const version = await api.post('/mcp', { token, headers: { ...accept, 'mcp-protocol-version': '1999-01-01' }, body: list(1) });
    expect(version.status).to.equal(400);
    expect(version.body.error.message).to.contain('Unsupported protocol version');
    const notRpc = await api.post('/mcp', { token, headers: accept, body: { hello: 1 } });
    expect([notRpc.status, notRpc.body.error.code]).to.deep.equal([400, -32700]);
    const notification = await api.post('/mcp', { token, headers: accept, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    expect([notification.status, notification.text]).to.deep.equal([202, '']);
    const batch = await api.post('/mcp', { token, headers: accept, body: [list('a'), { jsonrpc: '2.0', id: 7, method: 'nope' }, list(3)] });
    expect(batch.status).to.equal(200);
    expect(batch.body.map((m: Json) => m.id)).to.deep.equal(['a', 7, 3]);
    expect(batch.body[0].result.tools).to.have.length(5);
    expect(batch.body[1].error.code).to.equal(-32601);
    // Clients all send small ids: requests in flight together, each with id 1, get their own answers.
    const tokens = await Promise.all([api.token(), api.token(), api.token()]);
    await Promise.all(tokens.map(async (t, i) => ok(await connect(t), 'remember', { texts: [`note ${i}`], ids: [`n${i}`] })));
    const answers = await Promise.all(
      tokens.map((t) =>
        api.post('/mcp', {
          token: t,
          headers: accept,
          body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_memories', arguments: {} } },
        }),
      ),
    );
    expect(answers.map((a) => [a.body.id, a.body.result.structuredContent.memories.map((m: Json) => m.id)])).to.deep.equal([
      [1, ['n0']],
      [1, ['n1']],
      [1, ['n2']],
    ]);
  });

  it("keeps two sessions apart: one never recalls, lists, reads or forgets the other's memories", async () => {
    const { token: first, client: a } = await remembered();
    const b = await connect(await api.token());
    await ok(b, 'remember', { texts: ['rain is forecast for tomorrow'], ids: ['b-rain'] });
    const fromB = await ok(b, 'recall', { query: 'will it rain tomorrow', topK: 10 });
    expect(fromB.results.map((r: Json) => r.id)).to.deep.equal(['b-rain']);
    expect((await ok(b, 'list_memories')).memories.map((m: Json) => m.id)).to.deep.equal(['b-rain']);
    expect((await ok(b, 'forget', { ids: DOCS.map((d) => d.id) })).mutation).to.include({ deleted: 0 });
    expect((await ok(b, 'forget', { filter: { kind: 'weather' } })).mutation).to.include({ deleted: 0 });
    expect(await b.readResource({ uri: 'tempvec://record/rain' }).catch((err: unknown) => (err as McpError).code)).to.equal(-32002);
    const fromA = await ok(a, 'recall', { query: 'will it rain tomorrow', topK: 10 });
    expect(fromA.results.map((r: Json) => r.id)).not.to.include('b-rain');
    expect(expectOk(await api.post('/vectors/count', { token: first, body: {} })).count).to.equal(DOCS.length);
  });
});

describe('POST /mcp under the limits of every route', function () {
  this.timeout(120_000);
  const api = useServer({ requestRatePerSec: 1, maxBodyBytes: 2048, embeddingThreads: 1 });
  const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'memory_stats', arguments: {} } };
  const accept = { accept: 'application/json, text/event-stream' };

  it('answers a body past MAX_BODY_BYTES and a token past its rate as JSON-RPC errors with their HTTP status and code', async () => {
    const token = await api.token();
    const sized = (bytes: number) => {
      const body = { ...call, params: { name: 'remember', arguments: { texts: [''] } } };
      body.params.arguments.texts[0] = 'x'.repeat(bytes - JSON.stringify(body).length);
      return JSON.stringify(body);
    };
    expect(sized(2049)).to.have.length(2049);
    const tooLarge = await api.post('/mcp', { token, headers: accept, body: sized(2049) });
    expect(tooLarge.status).to.equal(413);
    expect(tooLarge.body.error.data).to.include({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    expect(tooLarge.body.error.data.details).to.deep.equal({ limit: 2048 });
    expect((await api.get('/limits')).body.limits.mcp).to.deep.equal({ maxBodyBytes: 2048, maxAnswerBytes: api.config.maxMcpAnswerBytes });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await api.post('/mcp', { token, headers: accept, body: call }));
    const limited = answers.find((res) => res.status === 429);
    expect(limited, answers.map((res) => res.status).join()).to.not.equal(undefined);
    expect(limited!.body.error.data).to.include({ code: 'RATE_LIMITED', status: 429 });
    expect(limited!.headers.get('retry-after')).to.match(/^\d+$/);
  });

  it('takes a CORS preflight naming mcp-protocol-version, and answers GET with 405', async () => {
    const preflight = await api.request('OPTIONS', '/mcp', {
      headers: {
        origin: 'http://localhost:8080',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,mcp-protocol-version',
      },
    });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers.get('access-control-allow-headers')!.split(',')).to.include.members(['authorization', 'content-type', 'mcp-protocol-version']);
    expect((await api.get('/mcp', { token: await api.token() })).status).to.equal(405);
  });
});

describe('MAX_MCP_ANSWER_BYTES', function () {
  this.timeout(120_000);
  const doc = { text: 'A storm with strong winds will reach the coast tonight.', metadata: { kind: 'weather', note: 'n'.repeat(300) } };
  const jsonBytes = Buffer.byteLength(JSON.stringify(doc.text)) + Buffer.byteLength(JSON.stringify(doc.metadata));
  /** The route's estimate of a hybrid answer of `hits` of these records (ids of 2 characters), doubled: both forms. */
  const estimate = (hits: number) => 2 * hitsBytes([Array.from({ length: hits }, (_, i) => ({ id: `d${i}`, score: 0, vectorRank: 1 }))], hits * jsonBytes);
  const api = useServer({ embeddingThreads: 1, maxMcpAnswerBytes: estimate(2) });

  it('answers recall and list_memories up to it, and a tool error ANSWER_TOO_LARGE one past it', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${api.base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${await api.token()}` } },
    });
    const client = new Client({ name: 'mcp-test', version: '1.0.0' });
    await client.connect(transport);
    const ids = ['d0', 'd1', 'd2'];
    await client.callTool({ name: 'remember', arguments: { texts: ids.map(() => doc.text), ids, metadata: ids.map(() => doc.metadata) } });
    const two = (await client.callTool({ name: 'recall', arguments: { query: 'storm', topK: 2 } })) as CallToolResult;
    expect(two.isError).to.equal(undefined);
    expect((two.structuredContent as Json).results).to.have.length(2);
    const three = (await client.callTool({ name: 'recall', arguments: { query: 'storm', topK: 3 } })) as CallToolResult;
    expect(three.isError).to.equal(true);
    expect((three.structuredContent as Json).error).to.deep.include({
      code: 'ANSWER_TOO_LARGE',
      details: { answerBytes: estimate(3), maxAnswerBytes: estimate(2) },
    });
    const listed = (await client.callTool({ name: 'list_memories', arguments: { limit: 3 } })) as CallToolResult;
    expect((listed.structuredContent as Json).error.code).to.equal('ANSWER_TOO_LARGE');
    expect(((await client.callTool({ name: 'list_memories', arguments: { limit: 1 } })) as CallToolResult).isError).to.equal(undefined);
    await client.close();
  });
});
