// A typed client generated from the served /openapi.json with
// openapi-typescript (default options) and openapi-fetch: client-flow.ts
// type-checks under --strict without casts, and runs against a live server.
import { expect } from 'chai';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { useServer } from '../helpers/http.js';

const OUT = new URL('../../test-output/openapi-client/', import.meta.url);
const FLOW = fileURLToPath(new URL('./client-flow.ts', import.meta.url));

/**
 * What clientFlow returns. The flow is imported by a computed path, so that
 * tsconfig.test.json does not check it: it needs the schema this file
 * generates, and this file type-checks it against that schema.
 */
interface FlowResult {
  hits: { id: string; score: number; year?: unknown }[];
  [field: string]: unknown;
}

describe('a client generated from /openapi.json (openapi-typescript + openapi-fetch)', function () {
  this.timeout(120_000);
  const api = useServer({ tokenRatePerMin: 0 });

  before(async () => {
    const doc = (await api.get('/openapi.json')).text;
    mkdirSync(OUT, { recursive: true });
    writeFileSync(new URL('schema.d.ts', OUT), astToString(await openapiTS(doc)));
  });

  it('type-checks a full flow under --strict, without casts', () => {
    const source = readFileSync(FLOW, 'utf8').replace(/\/\/.*$/gm, '');
    expect(source, 'no casts in the flow').to.not.match(/\bas\s+(?!const\b)[\w{[(]|\bany\b|<\w+>\s*\w/);
    const program = ts.createProgram([FLOW], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipLibCheck: true,
    });
    const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(errors).to.deep.equal([]);
  });

  it('runs that flow against a live server', async () => {
    const { clientFlow } = (await import(new URL('./client-flow.ts', import.meta.url).href)) as { clientFlow(baseUrl: string): Promise<FlowResult> };
    const out = await clientFlow(api.base);
    expect(out).to.deep.include({
      added: { added: 3, replaced: 0 },
      code: 'DIMENSION_MISMATCH',
      metric: 'cosine',
      maxTopK: 100,
      cleared: 3,
    });
    expect(out.hits.map((h) => [h.id, h.year])).to.deep.equal([
      ['kind-of-blue', 1959],
      ['a-love-supreme', 1965],
    ]);
    expect(out.rateLimit).to.match(/^"per-token";r=\d+;t=\d+$/);
  });
});
