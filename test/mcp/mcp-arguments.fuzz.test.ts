// Property-based fuzzing of the MCP tools' arguments with fast-check: any JSON
// value (and each tool's valid arguments with one field replaced by any JSON
// value) answers 200 with either the tool's result or a tool error whose code
// is a stable 4xx one, never INTERNAL_ERROR, never a JSON-RPC crash; and a
// call that fails changes nothing in the session.
import { expect } from 'chai';
import fc from 'fast-check';
import { ERROR_CODES } from '../../src/errors.js';
import { expectOk, useServer } from '../helpers/http.js';

const RUNS = 30;
type Json = ReturnType<typeof JSON.parse>;

/** Valid arguments per tool; the generators break them. */
const VALID: Record<string, Record<string, Json>> = {
  remember: { texts: ['a note'], ids: ['n1'], metadata: [{ k: 1 }] },
  recall: { query: 'a note', topK: 3, filter: { k: 1 }, mode: 'keywords' },
  forget: { ids: ['nothing'] },
  list_memories: { limit: 2, filter: { k: 1 } },
  memory_stats: {},
};

describe('MCP tool arguments (fuzz)', function () {
  this.timeout(300_000);
  const api = useServer({ embeddingThreads: 1 });
  const headers = { accept: 'application/json, text/event-stream' };

  async function callTool(token: string, name: string, args: unknown) {
    const res = await api.post('/mcp', { token, headers, body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } } });
    return res;
  }

  for (const name of Object.keys(VALID)) {
    it(`${name}: any arguments answer its result or a 4xx tool error, and a failed call changes nothing`, async () => {
      const token = await api.token();
      expectOk(await api.post('/vectors/add-many', { token, body: { vectors: [{ id: 'keep', text: 'kept note', metadata: { k: 1 } }] } }));
      const count = async () => expectOk(await api.post('/vectors/count', { token, body: {} })).count as number;
      const keys = Object.keys(VALID[name]);
      const broken = keys.length
        ? fc.tuple(fc.constantFrom(...keys), fc.jsonValue()).map(([key, value]) => ({ ...VALID[name], [key]: value }))
        : fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue(), { minKeys: 1, maxKeys: 3 });
      await fc.assert(
        fc.asyncProperty(fc.oneof(fc.jsonValue(), broken), async (args) => {
          const before = await count();
          const res = await callTool(token, name, args);
          expect(res.status, res.text).to.equal(200);
          const { result, error } = res.body;
          // Arguments that are not an object are refused by the protocol's own check (invalid params).
          if (error) {
            expect(error.code, res.text).to.equal(-32602);
            expect(error.message).to.match(/^Invalid params: params\.arguments: /);
            expect(await count()).to.equal(before);
            return;
          }
          if (!result.isError) return;
          const { code, status } = result.structuredContent.error;
          expect(Object.keys(ERROR_CODES), res.text).to.include(code);
          expect(status, res.text).to.be.within(400, 499);
          expect(await count()).to.equal(before);
        }),
        { numRuns: RUNS, seed: 37 },
      );
    });
  }
});
