// The body reader of add, add-many, search and search-many
// (src/http/body/vector-reader.ts) against JSON.parse: whenever it accepts a body,
// the result must be what JSON.parse gives with each number-array `vector`,
// `queryVector` and item of `queryVectors` rounded to float32; whatever it declines goes
// to JSON.parse unchanged, so only acceptance needs to be exact.
import { expect } from 'chai';
import fc from 'fast-check';
import { SPEC_LIMITS } from '../../../src/config.js';
import { readVectorBody, readVectorBodySliced } from '../../../src/http/body/vector-reader.js';
import { Slices } from '../../../src/limits/slices.js';
import { decodeFloat32Base64, encodeFloat32Base64 } from '../../../src/schemas/base64-float32.js';
import { CheckedBatch } from '../../../src/schemas/checked-batch.js';
import { VectorSchema } from '../../../src/schemas/vector.js';
import * as v from 'valibot';

/** What the reader must produce: JSON.parse with number-array and base64 vectors as Float32Arrays. */
function expected(text: string): unknown {
  const body = JSON.parse(text);
  const convert = (r: any) => {
    if (r && typeof r === 'object' && Array.isArray(r.vector)) r.vector = Float32Array.from(r.vector);
    if (r && typeof r === 'object' && typeof r.vector === 'string') r.vector = decodeFloat32Base64(r.vector) ?? r.vector;
  };
  convert(body);
  if (Array.isArray(body.vectors)) body.vectors.forEach(convert);
  if (Array.isArray(body.queryVector)) body.queryVector = Float32Array.from(body.queryVector);
  if (typeof body.queryVector === 'string') body.queryVector = decodeFloat32Base64(body.queryVector) ?? body.queryVector;
  if (Array.isArray(body.queryVectors)) {
    body.queryVectors = body.queryVectors.map((q: unknown) =>
      Array.isArray(q) ? Float32Array.from(q) : typeof q === 'string' ? (decodeFloat32Base64(q) ?? q) : q,
    );
  }
  return body;
}

/** Float32Arrays compared bit for bit (so -0 and 0 differ), everything else deeply. */
function sameValue(actual: unknown, wanted: unknown): void {
  expect(normalize(actual)).to.deep.equal(normalize(wanted));
}

function normalize(value: unknown): unknown {
  // add-many's batch: its records as JSON.parse would make them.
  if (value instanceof CheckedBatch) return value.records.map((_, i) => normalize(value.recordAt(i)));
  if (value instanceof Float32Array) return { f32: Array.from(new Uint32Array(value.buffer, value.byteOffset, value.length)) };
  if (Array.isArray(value)) return value.map(normalize);
  if (value && typeof value === 'object') {
    expect(Object.getPrototypeOf(value)).to.equal(Object.prototype);
    return Object.fromEntries(Object.keys(value).map((k) => [k, normalize((value as any)[k])]));
  }
  return value;
}

const parse = (text: string) => readVectorBody(Buffer.from(text, 'utf8'));

/** JSON number text of many shapes: integers, fractions, exponents, long digit runs, signed zeros. */
const numberText = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e16, max: 1e16 }).map(String),
  fc.float({ noNaN: true, noDefaultInfinity: true }).map((x) => String(x)),
  fc
    .tuple(
      fc.boolean(),
      fc.stringMatching(/^(0|[1-9][0-9]{0,24})$/),
      fc.option(fc.stringMatching(/^[0-9]{1,25}$/)),
      fc.option(fc.integer({ min: -60, max: 40 })),
    )
    .map(([neg, int, frac, exp]) => `${neg ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : `e${exp}`}`),
  fc.constantFrom('0', '-0', '0.0', '-0.0', '1e16', '-1e16', '1.0000000000000001e16', '1e-45', '3.4028235e38', '0.1', '1E2', '1e+2'),
);

const whitespace = fc.constantFrom('', ' ', '\n', '\t ', '\r\n');

describe('vector body reader (add, add-many, search, search-many)', () => {
  it("gives JSON.parse's value with vectors rounded to float32", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            id: fc.string({ minLength: 1, maxLength: 6 }),
            vector: fc.array(numberText, { minLength: 1, maxLength: 8 }),
            metadata: fc.option(fc.jsonValue({ maxDepth: 3 })),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        whitespace,
        (records, ws) => {
          const items = records.map(
            (r) =>
              `{${ws}"id"${ws}:${ws}${JSON.stringify(r.id)},"vector":[${r.vector.join(`${ws},${ws}`)}]${r.metadata === null ? '' : `,"metadata":${JSON.stringify(r.metadata)}`}}`,
          );
          const text = `${ws}{"vectors":${ws}[${items.join(',')}],"metric":"l2"}${ws}`;
          const body = parse(text);
          const inRange = records.every((r) => r.vector.every((x) => Math.abs(Number(x)) <= SPEC_LIMITS.maxAbsComponent));
          const ascii = /^\p{ASCII}*$/u.test(text);
          if (inRange && ascii) expect(body, text).to.not.equal(undefined);
          if (body !== undefined) sameValue(body, expected(text));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads queryVector(s) as vectors and the rest of a search body as JSON.parse', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(numberText, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 4 }),
        fc.option(fc.jsonValue({ maxDepth: 3 })),
        whitespace,
        (queries, filter, ws) => {
          const options = `"topK":${ws}3${filter === null ? '' : `,"filter":${JSON.stringify(filter)}`}`;
          const inRange = queries.every((q) => q.every((x) => Math.abs(Number(x)) <= SPEC_LIMITS.maxAbsComponent));
          const texts = [
            `{${ws}"queryVector"${ws}:${ws}[${queries[0].join(`${ws},${ws}`)}],${options}}`,
            `{${options},"queryVectors":${ws}[${queries.map((q) => `${ws}[${q.join(',')}]`).join(',')}]${ws}}`,
            `{"queryVectors":[${queries.map((q) => JSON.stringify(encodeFloat32Base64(Float32Array.from(q.map(Number))))).join(',')}],${options}}`,
          ];
          for (const text of texts) {
            const body = parse(text);
            const ascii = /^\p{ASCII}*$/u.test(text);
            if (inRange && ascii && !text.startsWith('{"queryVectors":["')) expect(body, text).to.not.equal(undefined);
            if (body !== undefined) sameValue(body, expected(text));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('rounds numbers near float32 rounding boundaries as JSON.parse plus float32 does', () => {
    fc.assert(
      fc.property(
        fc.float({ noNaN: true, noDefaultInfinity: true, min: Math.fround(-1e15), max: Math.fround(1e15) }),
        fc.integer({ min: -3, max: 3 }),
        (f, nudge) => {
          // Midpoints between neighbouring floats, nudged by a few units in the 17th digit.
          const next = Math.fround(f + Math.abs(f) * 2 ** -23) || 1e-40;
          const mid = (f + next) / 2;
          const text = (mid + nudge * Math.abs(mid) * 1e-16).toPrecision(17);
          const body = parse(`{"vector":[${text}]}`);
          expect(body).to.not.equal(undefined);
          sameValue(body, expected(`{"vector":[${text}]}`));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("gives any JSON body either JSON.parse's value or declines it", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const text = JSON.stringify({ vectors: [{ id: 'a', vector: [1, 2], metadata: value }], other: value });
        const body = parse(text);
        if (body !== undefined) sameValue(body, expected(text));
      }),
      { numRuns: 200 },
    );
  });

  it('reads a base64 vector exactly when the schema accepts it, else declines', () => {
    const base64Text = fc.oneof(
      fc
        .array(fc.float({ noNaN: true, noDefaultInfinity: true, min: Math.fround(-1e16), max: Math.fround(1e16) }), { minLength: 1, maxLength: 6 })
        .map((xs) => encodeFloat32Base64(xs)),
      fc.array(fc.float(), { minLength: 0, maxLength: 3 }).map((xs) => encodeFloat32Base64(xs)),
      fc.stringMatching(/^[A-Za-z0-9+/=_-]{0,16}$/),
      fc.array(fc.float({ noNaN: true, min: -1, max: 1 }), { minLength: 1, maxLength: 3 }).chain((xs) =>
        fc.nat(20).map((at) => {
          const t = encodeFloat32Base64(xs);
          const i = at % (t.length + 1);
          return t.slice(0, i) + '\\n' + t.slice(i);
        }),
      ),
    );
    fc.assert(
      fc.property(base64Text, (text) => {
        const body = `{"vectors":[{"id":"a","vector":"${text}"}]}`;
        const parsed = parse(body) as any;
        const accepted = v.safeParse(VectorSchema, JSON.parse(body).vectors[0].vector).success;
        // A string the schema refuses is left to the ordinary path, which reports it.
        if (accepted) sameValue(parsed, expected(body));
        else expect(parsed, text).to.equal(undefined);
      }),
      { numRuns: 400 },
    );
  });

  it('takes decoded values up to ±maxAbsComponent exactly, declines the next float', () => {
    const max = SPEC_LIMITS.maxAbsComponent;
    const above = Math.fround(max) > max ? Math.fround(max) : nextFloat32(Math.fround(max));
    const below = previousFloat32(above);
    expect(below).to.be.at.most(max);
    for (const xs of [
      [below, -below, 0, -0],
      [1, 2, 3, 4, 5, below],
    ]) {
      const body = JSON.stringify({ vectors: [{ id: 'a', vector: encodeFloat32Base64(xs) }] });
      sameValue(parse(body), expected(body));
    }
    for (const bad of [above, -above, Infinity, -Infinity, NaN]) {
      const body = JSON.stringify({ vectors: [{ id: 'a', vector: encodeFloat32Base64([1, bad, 2]) }] });
      expect(parse(body), String(bad)).to.equal(undefined);
    }
  });

  it('declines what it does not read itself, so the ordinary path answers as before', () => {
    const declined = [
      '',
      ' ',
      '[]',
      '{',
      '{"vectors":[{"id":"a","vector":[1,2]}]',
      '{"vector":[]}',
      '{"vector":[1,]}',
      '{"vector":[1 2]}',
      '{"vector":[01]}',
      '{"vector":[1.]}',
      '{"vector":[.5]}',
      '{"vector":[1e]}',
      '{"vector":[+1]}',
      '{"vector":[NaN]}',
      '{"vector":[1e17]}',
      '{"vector":[-1.00000000001e16]}',
      '{"vector":[1e400]}',
      '{"vector":["1"]}',
      '{"vector":[[1]]}',
      '{"__proto__":{"vector":[1]}}',
      '{"vectors":[{"__proto__":1,"id":"a","vector":[1]}]}',
      '{"\\u005f_proto__":{"vector":[1]}}',
      '{"vector":[1]} x',
      '{"vectors":[],"metric":"cosine"}',
      '{"vector":[1]}{}',
      '{"id":"a\u0001","vector":[1]}',
      '{"metadata":{"a":tru},"vector":[1]}',
      `{"vector":[${Array(SPEC_LIMITS.maxDimensions + 1)
        .fill(1)
        .join(',')}]}`,
      // A non-ASCII byte outside a string: in base64, a number, between tokens.
      '{"vector":"AACAPé=="}',
      '{"vector":[1é]}',
      '{"vector":[1]\u00a0}',
    ];
    for (const text of declined) expect(parse(text), text).to.equal(undefined);
  });

  it('declines an add-many batch whose ids or vectors it cannot vouch for', () => {
    const read = (text: string) => readVectorBody(Buffer.from(text), undefined, undefined, 3);
    expect(read('{"vectors":[{"id":"abc","vector":[1]},{"vector":"AACAPw==","id":"b","metadata":{}}]}')?.vectors).to.be.instanceOf(CheckedBatch);
    for (const text of [
      '{"vectors":[{"id":"abcd","vector":[1]}]}',
      '{"vectors":[{"id":"","vector":[1]}]}',
      '{"vectors":[{"id":1,"vector":[1]}]}',
      '{"vectors":[{"vector":[1]}]}',
      '{"vectors":[{"id":"a"}]}',
      '{"vectors":[{"id":"a","vector":{}}]}',
      '{"vectors":[{}]}',
    ])
      expect(read(text), text).to.equal(undefined);
  });

  it("keeps escaped ids and a repeated key's last value as JSON.parse does", () => {
    for (const text of [
      '{"id":"a\\"b\\u00e9\\n","vector":[1,2]}',
      '{"vector":[1,2],"vector":[3,4]}',
      '{"vectors":[{"id":"x","vector":"AACAPw=="}],"dimensions":1}',
      '{"vector":"AACAPwAAAEA=","id":"x"}',
      '{"vector":[1e16,-1e16,4.9e-324,1e-46,0.30000000000000004]}',
    ]) {
      const body = parse(text);
      expect(body, text).to.not.equal(undefined);
      sameValue(body, expected(text));
    }
  });

  it('reads non-ASCII text in strings as strict UTF-8, as JSON.parse of the body', () => {
    for (const text of [
      '{"id":"é","vector":[1]}',
      '{"vector":[1],"é":1}',
      '{"vector":[1],"metadata":{"a":["x","é"]}}',
      '{"vectors":[{"id":"a","vector":[1]},{"id":"bé😀","vector":[1],"metadata":{"ключ":"値"}}]}',
      '{"queryVector":[1],"filter":{"tag":{"$in":["x","ü"]}}}',
    ])
      sameValue(parse(text), expected(text));
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 2, stringUnit: 'binary' }), (id, metadata) => {
        const text = JSON.stringify({
          vectors: [
            { id, vector: [1, 2], metadata },
            { id: 'b', vector: [3, 4] },
          ],
        });
        sameValue(parse(text), expected(text));
      }),
      { numRuns: 200 },
    );
  });

  it('declines invalid UTF-8 and a byte order mark inside the body', () => {
    const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => Buffer.from(p as string)));
    for (const body of [
      bytes('{"vector":[1],"metadata":{"a":"', [0xff], '"}}'),
      bytes('{"id":"', [0xc3], '","vector":[1]}'),
      bytes('{"vector":[1],"metadata":{"a":"', [0xed, 0xa0, 0x80], '"}}'),
      bytes('{"vector":[1],"metadata":', [0xef, 0xbb, 0xbf], '1}'),
      bytes([0xef, 0xbb, 0xbf], '{"vector":[1]}'),
    ])
      expect(readVectorBody(body), body.toString('latin1')).to.equal(undefined);
  });
});

describe('vector body reader in slices', () => {
  /** A body of records (number or base64 vectors, unicode metadata) and query vectors. */
  const body = fc
    .record({
      vectors: fc.array(
        fc.record({
          id: fc.string({ maxLength: 6, unit: 'binary' }),
          vector: fc.oneof(
            fc.array(numberText, { minLength: 1, maxLength: 8 }).map((xs) => `[${xs.join(',')}]`),
            fc.array(fc.float({ noNaN: true, min: -1e6, max: 1e6 }), { minLength: 1, maxLength: 8 }).map((xs) => `"${encodeFloat32Base64(xs)}"`),
          ),
          metadata: fc.option(fc.jsonValue({ maxDepth: 2, stringUnit: 'binary' })),
        }),
        { minLength: 1, maxLength: 6 },
      ),
      queryVectors: fc.array(
        fc.array(fc.float({ noNaN: true, min: -1e6, max: 1e6 }), { minLength: 2, maxLength: 2 }).map((xs) => `"${encodeFloat32Base64(xs)}"`),
        { maxLength: 4 },
      ),
    })
    .map(({ vectors, queryVectors }) => {
      const items = vectors.map(
        (r) => `{"id":${JSON.stringify(r.id)},"vector":${r.vector}${r.metadata === null ? '' : `,"metadata":${JSON.stringify(r.metadata)}`}}`,
      );
      return `{"vectors":[${items.join(',')}],"metric":"l2"${queryVectors.length ? `,"queryVectors":[${queryVectors.join(',')}]` : ''}}`;
    });
  const sliced = (text: string) => readVectorBodySliced(Buffer.from(text), undefined, undefined, undefined, new Slices(0));

  it('gives the value of the one-piece parse when it yields after every item', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (text) => {
        const whole = readVectorBody(Buffer.from(text));
        const inSlices = await sliced(text);
        if (whole === undefined) expect(inSlices).to.equal(undefined);
        else sameValue(inSlices, whole);
        if (whole !== undefined) sameValue(whole, expected(text));
      }),
      { numRuns: 200 },
    );
  });

  it("keeps each body's base64 vectors apart when sliced parses interleave", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(body, { minLength: 2, maxLength: 4 }), async (texts) => {
        // Each yields after every item, so the parses take turns with the shared base64 decoder.
        const parsed = await Promise.all(texts.map(sliced));
        texts.forEach((text, i) => {
          const whole = readVectorBody(Buffer.from(text));
          if (whole === undefined) expect(parsed[i]).to.equal(undefined);
          else sameValue(parsed[i], whole);
        });
      }),
      { numRuns: 100 },
    );
  });

  it('declines in slices what it declines in one piece', async () => {
    const declined = [
      '{"vectors":[{"id":"a","vector":[1]},{"id":"b","vector":[1e17]}]}',
      '{"vectors":[{"id":"a","vector":[1]},{"__proto__":1,"id":"b","vector":[1]}]}',
      '{"vectors":[{"id":"a","vector":[1]},{"id":"b","vector":[1]}] x',
      '{"queryVectors":["AACAPw==","AACAPé=="]}',
      '{"vectors":[{"id":"a","vector":[1]},]}',
    ];
    for (const text of declined) {
      expect(readVectorBody(Buffer.from(text)), text).to.equal(undefined);
      expect(await sliced(text), text).to.equal(undefined);
    }
  });
});

function float32Bits(x: number): number {
  return new Int32Array(Float32Array.of(x).buffer)[0];
}

function fromBits(bits: number): number {
  return new Float32Array(Int32Array.of(bits).buffer)[0];
}

const nextFloat32 = (x: number) => fromBits(float32Bits(x) + 1);
const previousFloat32 = (x: number) => fromBits(float32Bits(x) - 1);
