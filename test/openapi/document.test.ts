// GET /openapi.json: a valid OpenAPI 3.1 document that covers every route the
// server has and publishes the configured limits as schema bounds.
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import { packageInfo } from '../../src/http/package-info.js';
import { openApiDocument } from '../../src/openapi/document.js';
import { NOT_IN_OPENAPI } from '../../src/openapi/operations.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';
import { REVALIDATE } from '../helpers/openapi-check.js';

describe('GET /openapi.json', () => {
  let live: LiveApp;
  let doc: any;

  before(async () => {
    live = await startApp({ maxAddManyBatch: 7, maxSearchManyBatch: 5, maxIdLength: 33, maxGetManyBatch: 9 });
    const res = await live.send('GET', '/openapi.json');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    doc = res.body;
  });
  after(() => live.close());

  it('states the license package.json gives, an SPDX one as its identifier', () => {
    expect(packageInfo.license).to.be.a('string');
    expect(doc.info.license.name).to.include(packageInfo.license);
    const mit = openApiDocument(live.config, { ...packageInfo, license: 'MIT' }).info.license;
    expect(mit).to.deep.equal({ name: 'MIT', identifier: 'MIT' });
  });

  it('passes an OpenAPI 3.1 validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? [], JSON.stringify(result.errors)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
  });

  it('holds only valid JSON Schema 2020-12 schemas (the dialect it declares)', () => {
    expect(doc.jsonSchemaDialect).to.equal('https://json-schema.org/draft/2020-12/schema');
    // The OpenAPI validator checks the document's structure; ajv checks each schema against the meta-schema.
    const ajv = new Ajv2020({ strict: true });
    ajv.addKeyword('x-checks');
    const schemas: [string, unknown][] = Object.entries(doc.components.schemas).map(([name, schema]) => [name, schema]);
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        const bodies = [op.requestBody, ...Object.values<any>(op.responses)].filter(Boolean);
        for (const body of bodies)
          for (const [type, media] of Object.entries<any>(body.content ?? {})) schemas.push([`${method} ${path} ${type}`, media.schema]);
      }
    }
    expect(schemas.length).to.be.greaterThan(60);
    for (const [where, schema] of schemas) {
      expect(ajv.validateSchema(schema as object), `${where}: ${ajv.errorsText(ajv.errors)}`).to.equal(true);
    }
  });

  it('has exactly the routes the server answers (GET / lists them from the router) but those it says it leaves out', async () => {
    const overview = await live.send('GET', '/');
    const left = NOT_IN_OPENAPI.map((r) => `${r.method} ${r.path}`);
    const served = overview.body.routes.map((r: { method: string; path: string }) => `${r.method.toLowerCase()} ${r.path}`).sort();
    expect(served).to.include.members(left);
    for (const r of NOT_IN_OPENAPI) expect(doc.info.description).to.contain(`${r.method.toUpperCase()} ${r.path} (see ${r.see})`);
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops as object).map((m) => `${m} ${path}`))
      .sort();
    expect(documented).to.deep.equal(served.filter((route: string) => !left.includes(route)));
  });

  it('requires the bearer scheme exactly on the routes that need a token', async () => {
    expect(doc.components.securitySchemes.bearerAuth).to.include({ type: 'http', scheme: 'bearer' });
    const open = [
      'get /',
      'get /openapi.json',
      'get /limits',
      'get /sdk.js',
      'get /sdk.d.ts',
      'get /kernel.wasm',
      'get /kernel.simd128.wasm',
      'get /demo/passages.json',
      'get /models/use-lite-512/manifest.json',
      'get /models/use-lite-512/{hash}/{file}',
      'post /token',
      'get /healthz',
      'get /readyz',
      'get /metrics',
    ];
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        const expected = open.includes(`${method} ${path}`) ? [] : [{ bearerAuth: [] }];
        expect(op.security, `${method} ${path}`).to.deep.equal(expected);
        const res = await live.send(method.toUpperCase(), path, method === 'post' ? { body: {} } : {});
        if (expected.length) expect(res.body.error.code, `${method} ${path} without a token`).to.equal('UNAUTHORIZED');
        else expect(res.status, `${method} ${path} without a token`).to.not.equal(401);
      }
    }
  });

  it('publishes the configured limits as schema bounds', () => {
    const body = (path: string) => doc.paths[path].post.requestBody.content['application/json'].schema;
    expect(body('/vectors/add-many').properties.vectors.maxItems).to.equal(7);
    expect(body('/search-many').properties.queryVectors.maxItems).to.equal(5);
    expect(body('/vectors/get-many').properties.ids.maxItems).to.equal(9);
    expect(body('/vectors/add').properties.id.maxLength).to.equal(33);
    expect(body('/vectors/add').properties.dimensions).to.include({ type: 'integer', minimum: 1, maximum: 1024 });
    expect(body('/search').properties.topK).to.include({ type: 'integer', minimum: 1, maximum: 100, default: 10 });
    expect(body('/search').properties.candidatePool).to.include({ minimum: 1, maximum: 2048 });
    expect(body('/search').anyOf).to.deep.equal([{ required: ['queryVector'] }, { required: ['queryId'] }, { required: ['queryText'] }]);
    expect(body('/search')['x-checks']).to.include('queryVector or queryId, not both');
    expect(body('/search-many').anyOf).to.deep.equal([{ required: ['queryVectors'] }, { required: ['queryIds'] }, { required: ['queryTexts'] }]);
    expect(body('/vectors/delete-many').oneOf).to.deep.equal([{ required: ['ids'] }, { required: ['filter'] }]);
    expect(body('/vectors/list').properties.limit).to.include({ minimum: 1, maximum: 1000, default: 100 });
  });

  it('keeps the plain-object and metadata-size checks instead of dropping them', () => {
    const add = doc.paths['/vectors/add'].post.requestBody.content['application/json'].schema;
    expect(add.properties.metadata.type).to.equal('object');
    expect(add.properties.metadata['x-checks']).to.include('must be at most 8192 bytes as JSON');
    const search = doc.paths['/search'].post.requestBody.content['application/json'].schema;
    expect(search.properties.filter.type).to.equal('object');
  });

  it('every error response refers to the one shared ErrorResponse schema', () => {
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        for (const [status, response] of Object.entries<any>(op.responses)) {
          if (Number(status) < 400 || status === '431') continue;
          expect(response.content['application/json'].schema.allOf[0], `${method} ${path} ${status}`).to.deep.equal({
            $ref: '#/components/schemas/ErrorResponse',
          });
        }
      }
    }
  });

  it('describes every operation and tag, beyond the one-line summary', () => {
    for (const ops of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(ops)) expect(op.description, op.operationId).to.be.a('string').and.not.equal(op.summary);
    }
    for (const tag of doc.tags) expect(tag.description, tag.name).to.be.a('string').with.length.above(10);
  });

  it('declares the routes that take no body without a requestBody', () => {
    for (const [path, op] of [
      ['/token', doc.paths['/token'].post],
      ['/index/reset', doc.paths['/index/reset'].post],
      ['/vectors/clear', doc.paths['/vectors/clear'].post],
    ]) {
      expect(op.requestBody, path).to.equal(undefined);
      expect(op.description, path).to.include('Takes no body');
    }
  });

  it("declares each route's error codes under their HTTP statuses", () => {
    const codes = (path: string, method: string, status: string) =>
      doc.paths[path][method].responses[status].content['application/json'].schema.allOf[1].properties.error.properties.code.enum;
    expect(codes('/vectors/get', 'post', '404')).to.deep.equal(['VECTOR_NOT_FOUND']);
    expect(codes('/vectors/add', 'post', '409')).to.deep.equal([
      'METRIC_LOCKED',
      'VECTOR_TYPE_LOCKED',
      'ANALYZER_LOCKED',
      'ANALYZER_CHANGED',
      'EMBEDDING_LOCKED',
      'CAPACITY_EXCEEDED',
    ]);
    expect(codes('/search', 'post', '400')).to.include('QUERY_TEXT_EMPTY');
    expect(codes('/session', 'get', '401')).to.deep.equal(['UNAUTHORIZED', 'INVALID_TOKEN', 'SESSION_EXPIRED']);
    expect(doc.paths['/session'].get.responses).to.not.have.property('400');
    expect(codes('/token', 'post', '503')).to.deep.equal(['SERVER_AT_CAPACITY', 'INSTANCE_UNAVAILABLE']);
  });

  it('answers a matching If-None-Match with 304', async () => {
    const first = await live.send('GET', '/openapi.json');
    const again = await live.send('GET', '/openapi.json', { headers: { 'if-none-match': first.headers.get('etag')!, ...REVALIDATE } });
    expect(again.status).to.equal(304);
  });
});
