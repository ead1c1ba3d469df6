// Property-based fuzzing of every route with fast-check: generated bodies that
// are invalid by construction (wrong types, missing or extra fields, huge and
// tiny numbers, strings for numbers, nested garbage, invalid UTF-8, truncated
// JSON) must each get a 4xx JSON error with a stable code, never a 5xx or a
// hang, and leave both the target session and a reference session unchanged.
import { expect } from 'chai';
import fc from 'fast-check';
import { ERROR_CODES } from '../../src/errors.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';

const RUNS = 40;
const DIM = 3;
type Json = ReturnType<typeof JSON.parse>;

/** A valid body per JSON route; the generators break it. */
const VALID: Record<string, Record<string, Json>> = {
  '/vectors/has': { id: 'r1' },
  '/vectors/get': { id: 'r1' },
  '/vectors/get-many': { ids: ['r1', 'r2'] },
  '/vectors/metadata/get': { id: 'r1' },
  '/vectors/metadata/set': { id: 'r1', metadata: { tag: 'changed' } },
  '/vectors/metadata/delete': { id: 'r1' },
  '/vectors/add': { id: 'new', vector: [1, 2, 3], metadata: { a: 1 }, dimensions: DIM, metric: 'l2' },
  '/vectors/add-many': { vectors: [{ id: 'new', vector: [1, 2, 3], metadata: { a: 1 } }], dimensions: DIM, metric: 'l2' },
  '/vectors/delete': { id: 'r1' },
  '/vectors/delete-many': { ids: ['r1'] },
  '/search': { queryVector: [1, 0, 0], topK: 3, candidatePool: 10, includeMetadata: true, filter: { tag: 'x' } },
  '/search-many': { queryVectors: [[1, 0, 0]], topK: 3, candidatePool: 10, includeMetadata: true, filter: { tag: 'x' } },
};
/** Fields a body cannot do without. */
const REQUIRED: Record<string, string[]> = {
  '/vectors/metadata/set': ['id', 'metadata'],
  '/vectors/add': ['id', 'vector'],
  '/vectors/add-many': ['vectors'],
  '/search': ['queryVector'],
  '/search-many': ['queryVectors'],
};
const requiredOf = (route: string) => REQUIRED[route] ?? Object.keys(VALID[route]);

/** Where a number goes in each body, as a path, and whether it must be an integer. */
const NUMBER_SLOTS: Record<string, [path: (string | number)[], integer: boolean][]> = {
  '/vectors/add': [
    [['vector', 1], false],
    [['dimensions'], true],
  ],
  '/vectors/add-many': [
    [['vectors', 0, 'vector', 0], false],
    [['dimensions'], true],
  ],
  '/search': [
    [['queryVector', 2], false],
    [['topK'], true],
    [['candidatePool'], true],
  ],
  '/search-many': [
    [['queryVectors', 0, 1], false],
    [['topK'], true],
    [['candidatePool'], true],
  ],
};

/** Fields that also take a string (base64 float32), so a string is not a wrong type there. */
const STRING_OK = new Set(['vector', 'queryVector', 'queryVectors']);

function jsonType(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

const clone = (value: Json): Json => JSON.parse(JSON.stringify(value));

function setAt(body: Json, path: (string | number)[], value: Json): Json {
  const copy = clone(body);
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key];
  node[path[path.length - 1]] = value;
  return copy;
}

/** JSON text of `body` with `raw` (JSON text) at `path`, so values JSON cannot hold (1e999) can be sent. */
function textWith(body: Json, path: (string | number)[], raw: string): string {
  const marker = '"@@slot@@"';
  return JSON.stringify(setAt(body, path, '@@slot@@')).replace(marker, raw);
}

/** JSON text of objects and arrays nested `levels` deep (built as text: JSON.stringify recurses). */
function nestedText(levels: number): string {
  let open = '';
  let close = '';
  for (let i = 0; i < levels; i++) {
    open += i % 2 ? '[' : '{"k":';
    close = (i % 2 ? ']' : '}') + close;
  }
  return open + '"leaf"' + close;
}

interface Case {
  kind: string;
  raw: string | Uint8Array;
  headers?: Record<string, string>;
}

const text = (kind: string, raw: string): Case => ({ kind, raw });

/** Invalid bodies for `route`, every one of them invalid by construction. */
function invalidBodies(route: string): fc.Arbitrary<Case> {
  const valid = VALID[route];
  const fields = Object.keys(valid);
  const validText = JSON.stringify(valid);
  const arbitraries: fc.Arbitrary<Case>[] = [
    // Not an object at all.
    fc
      .oneof(fc.integer(), fc.double({ noNaN: true }), fc.string(), fc.boolean(), fc.array(fc.jsonValue({ maxDepth: 3 })))
      .map((v) => text('not an object', JSON.stringify(v))),
    // A field of the wrong type.
    fc.constantFrom(...fields).chain((field) =>
      fc
        .jsonValue({ maxDepth: 3 })
        .filter((v) => jsonType(v) !== jsonType(valid[field]) && v !== null && !(STRING_OK.has(field) && typeof v === 'string'))
        .map((v) => text(`wrong type for ${field}`, JSON.stringify({ ...valid, [field]: v }))),
    ),
    // A required field missing.
    fc.constantFrom(...requiredOf(route)).map((field) => {
      const { [field]: _dropped, ...rest } = valid;
      return text(`missing ${field}`, JSON.stringify(rest));
    }),
    // An extra field, "__proto__" and friends included (written as JSON text, so they stay keys).
    fc
      .tuple(fc.oneof(fc.string({ minLength: 1 }), fc.constantFrom('__proto__', 'constructor', 'prototype')), fc.jsonValue({ maxDepth: 2 }))
      .filter(
        ([key]) =>
          !Object.hasOwn(valid, key) && !['dimensions', 'metric', 'vectorType', 'metadata', 'topK', 'candidatePool', 'includeMetadata', 'filter'].includes(key),
      )
      .map(([key, value]) => text(`extra field ${key}`, validText.slice(0, -1) + `,${JSON.stringify(key)}:${JSON.stringify(value)}}`)),
    // Nested garbage where a value goes (past the depth limit, or in a scalar's place).
    fc
      .tuple(fc.constantFrom(...fields), fc.integer({ min: 20, max: 5000 }))
      .map(([field, levels]) => text(`nested garbage in ${field}`, textWith(valid, [field], nestedText(levels)))),
    // Invalid UTF-8 spliced into the valid text.
    fc
      .tuple(
        fc.integer({ min: 0, max: validText.length }),
        fc.constantFrom([0xff], [0xc0, 0x80], [0x80], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]),
      )
      .map(([at, bad]) => {
        const bytes = Buffer.from(validText);
        return { kind: 'invalid UTF-8', raw: Buffer.concat([bytes.subarray(0, at), Buffer.from(bad), bytes.subarray(at)]) };
      }),
    // Truncated JSON (an empty body included: it is {} and lacks the required fields).
    fc.integer({ min: 0, max: validText.length - 1 }).map((cut) => text('truncated JSON', validText.slice(0, cut))),
  ];
  const slots = NUMBER_SLOTS[route];
  if (slots) {
    arbitraries.push(
      fc.constantFrom(...slots).chain(([path, integer]) =>
        fc
          .oneof(
            fc.double({ min: 1e17, noNaN: true, noDefaultInfinity: true }).map((n) => String(n)),
            fc.double({ max: -1e17, noNaN: true, noDefaultInfinity: true }).map((n) => String(n)),
            fc.constantFrom('1e999', '-1e999', '"1"', '"NaN"', 'true', '[1]', '{}'),
            integer ? fc.constantFrom('0.5', '1e-300', '0', '-1', '1e300', '5e-324') : fc.constant('"0.5"'),
          )
          .map((raw) => text(`bad number ${raw} at /${path.join('/')}`, textWith(valid, path, raw))),
      ),
    );
  }
  return fc.oneof(...arbitraries);
}

describe('fuzzing every route with invalid bodies', function () {
  this.timeout(120_000);
  let live: LiveApp;
  let reference: string;
  let target: string;

  async function snapshot(token: string) {
    const many = await live.send('POST', '/vectors/get-many', { token, body: { ids: ['r1', 'r2', 'r3', 'new'] } });
    const session = await live.send('GET', '/session', { token });
    const search = await live.send('POST', '/search', { token, body: { queryVector: [1, 1, 1], topK: 10, includeMetadata: true } });
    return {
      vectors: many.body.vectors,
      notFound: many.body.notFound,
      count: session.body.session.vectorCount,
      config: session.body.session.config,
      results: search.body.results,
    };
  }

  async function seed(token: string) {
    const res = await live.send('POST', '/vectors/add-many', {
      token,
      body: { metric: 'l2', vectors: [1, 2, 3].map((i) => ({ id: `r${i}`, vector: [i, i + 1, i * 2], metadata: { tag: `t${i}`, n: i } })) },
    });
    expect(res.status).to.equal(200);
  }

  before(async () => {
    live = await startApp({ tokenRatePerMin: 0, requestRatePerSec: 0 });
    reference = await live.newToken();
    target = await live.newToken();
    await seed(reference);
    await seed(target);
  });
  after(() => live.close());

  for (const route of Object.keys(VALID)) {
    it(`answers POST ${route} with a 4xx JSON error for every invalid body and changes nothing`, async () => {
      const refBefore = await snapshot(reference);
      const targetBefore = await snapshot(target);
      await fc.assert(
        fc.asyncProperty(invalidBodies(route), fc.boolean(), async (body, useReference) => {
          const res = await live.send('POST', route, { token: useReference ? reference : target, raw: body.raw, timeoutMs: 5000 });
          const detail = `${body.kind}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
          expect(res.status, detail).to.be.within(400, 499);
          expect(res.body.success, detail).to.equal(false);
          expect(ERROR_CODES, detail).to.have.property(res.body.error.code);
          expect(res.status, detail).to.equal(ERROR_CODES[res.body.error.code as keyof typeof ERROR_CODES]);
        }),
        { numRuns: RUNS },
      );
      expect(await snapshot(reference)).to.deep.equal(refBefore);
      expect(await snapshot(target)).to.deep.equal(targetBefore);
    });
  }

  it('answers the routes without a body with no 5xx whatever body they get', async () => {
    const routes: [string, string][] = [
      ['GET', '/session'],
      ['GET', '/limits'],
      ['GET', '/'],
      ['GET', '/openapi.json'],
      ['POST', '/token'],
      ['POST', '/index/reset'],
      ['POST', '/vectors/clear'],
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), fc.uint8Array({ maxLength: 64 }), async ([method, path], bytes) => {
        const res = await live.send(method, path, { token: target, raw: method === 'GET' ? undefined : bytes, timeoutMs: 5000 });
        expect(res.status).to.be.below(500);
        if (res.status >= 400) expect(ERROR_CODES, `${method} ${path}`).to.have.property(res.body.error.code);
      }),
      { numRuns: RUNS },
    );
    await live.send('POST', '/index/reset', { token: target });
    await seed(target);
  });

  it('answers garbage on unknown routes and methods with a JSON 404 or 405', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH'), fc.webPath(), async (method, path) => {
        const res = await live.send(method, path.startsWith('/') ? path : `/${path}`, { token: target, timeoutMs: 5000 });
        expect(res.status).to.be.below(500);
        if (res.status >= 400) expect(ERROR_CODES).to.have.property(res.body.error.code);
      }),
      { numRuns: RUNS },
    );
  });

  it('keeps serving the reference session after all of it', async () => {
    const res = await live.send('POST', '/vectors/get', { token: reference, body: { id: 'r2' } });
    expect(res.status).to.equal(200);
    expect(res.body.vector).to.deep.equal({ id: 'r2', vector: [2, 3, 4], metadata: { tag: 't2', n: 2 } });
  });
});
