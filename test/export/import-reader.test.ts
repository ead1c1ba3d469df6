// Export text and ImportReader: a round trip gives back every vector bit for
// bit; a truncated, corrupt or foreign body is refused, naming its line.
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { exportText, type VectorEncoding } from '../../src/export/format.js';
import { firstTooDeep } from '../../src/schemas/json-shape.js';
import { ImportReader, importOptions, type MetadataMeasure, prepareImport } from '../../src/export/import-reader.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { requestSchemas } from '../../src/schemas/index.js';
import { expectApiError } from '../helpers/errors.js';
import { randomInt, randomVector, seededRng } from '../helpers/random.js';

const schemas = requestSchemas(loadConfig({}));
const newIndex = () => new VectorIndex(loadKernelModule(), 10_000);
const bytes = (text: string) => new TextEncoder().encode(text);

/** Read `text` as an import arriving in chunks of random sizes; with `measure`, metadata kept as measured text (the server's route). */
function read(text: string, seed = 1, measure?: MetadataMeasure) {
  const rng = seededRng(seed);
  const reader = new ImportReader(schemas, undefined, measure);
  const all = bytes(text);
  for (let at = 0; at < all.length; ) {
    const size = 1 + randomInt(rng, 300);
    reader.push(all.subarray(at, at + size));
    at += size;
  }
  return reader.finish();
}

function importInto(index: VectorIndex, text: string) {
  const plan = prepareImport(index, read(text));
  return plan ? index.applyUpsert(plan) : { added: 0, replaced: 0 };
}

function filled(seed: number) {
  const rng = seededRng(seed);
  const index = newIndex();
  index.upsert(
    Array.from({ length: 120 }, (_, i) => ({
      id: i === 7 ? 'naïve ✓ "quoted"\nid' : `v${i}`,
      vector: randomVector(rng, 5).map((x, j) => (j === 0 && i === 3 ? -0 : x * 10 ** randomInt(rng, 12) * 1e-6)),
      metadata: i % 2 ? { i, tags: ['a', { b: null }] } : undefined,
    })),
    { metric: 'l2', vectorType: 'int8' },
  );
  index.delete(['v10']);
  index.upsert([{ id: 'v4', vector: [1, 2, 3, 4, 5] }]);
  return index;
}

describe('export text and ImportReader', () => {
  for (const encoding of ['numbers', 'base64'] as VectorEncoding[]) {
    it(`round-trips every vector's float32 bits, metadata, order and configuration (${encoding})`, () => {
      const source = filled(3);
      const text = exportText(source.openExport(), encoding);
      const lines = text.trim().split('\n');
      expect(JSON.parse(lines[0])).to.deep.equal({
        format: 'tempvec-export',
        version: 1,
        dimensions: 5,
        metric: 'l2',
        vectorType: 'int8',
        analyzer: null,
        count: 119,
      });
      const target = newIndex();
      expect(importInto(target, text)).to.deep.equal({ added: 119, replaced: 0 });
      expect(target.getConfig()).to.deep.equal(source.getConfig());
      const all = (index: VectorIndex) => index.list({ limit: 1000, includeVectors: true, includeMetadata: true }).vectors;
      const a = all(source);
      const b = all(target);
      expect(b.map((x) => x.id)).to.deep.equal(a.map((x) => x.id));
      a.forEach((x, i) => {
        // -0 written as a JSON number reads back as 0: the one value that form does not keep.
        const expected = encoding === 'numbers' ? x.vector!.map((c) => c + 0) : x.vector!;
        expect(new Uint8Array(b[i].vector!.buffer)).to.deep.equal(new Uint8Array(Float32Array.from(expected).buffer), x.id);
        expect(b[i].metadata).to.deep.equal(x.metadata);
      });
      const query = [0.1, 0.2, 0.3, 0.4, 0.5];
      expect(target.search([query], { topK: 20 })).to.deep.equal(source.search([query], { topK: 20 }));
    });
  }

  it("with a measure, keeps each line's metadata as its JSON text, and the import answers filters as one that kept the objects", () => {
    const rng = seededRng(8);
    const source = newIndex();
    source.upsert(
      Array.from({ length: 300 }, (_, i) => ({
        id: `m${i}`,
        vector: randomVector(rng, 6),
        metadata: i % 5 === 0 ? undefined : { n: randomInt(rng, 50), tag: `t${randomInt(rng, 4)}`, list: [randomInt(rng, 3), 'x'], o: { k: i % 3 } },
      })),
    );
    const text = exportText(source.openExport(), 'base64');
    const kept = newIndex();
    const measured = newIndex();
    const parsed = read(text, 2, (metadata) => measured.measureMetadata(metadata));
    expect(parsed.records.every((record) => record.metadata === undefined)).to.equal(true);
    const lines = text.trim().split('\n').slice(1);
    expect(parsed.preparedMetadata?.json.map((json) => json?.text ?? null)).to.deep.equal(
      // An empty object is stored as none.
      lines.map((line) => {
        const json = JSON.stringify(JSON.parse(line).metadata ?? {});
        return json === '{}' ? null : json;
      }),
    );
    measured.applyUpsert(prepareImport(measured, parsed)!);
    kept.applyUpsert(prepareImport(kept, read(text, 2))!);
    const query = randomVector(rng, 6);
    for (const filter of [{ n: { $lt: 20 } }, { tag: 't1' }, { list: 'x' }, { 'o.k': 2 }, { $or: [{ n: 3 }, { tag: { $in: ['t0', 't3'] } }] }]) {
      expect(measured.count(filter)).to.equal(kept.count(filter)).and.to.equal(source.count(filter));
      expect(measured.search([query], { topK: 30, filter, includeMetadata: true })).to.deep.equal(
        source.search([query], { topK: 30, filter, includeMetadata: true }),
      );
    }
  });

  it('imports the export of a new session as nothing, and accepts CRLF and blank lines', () => {
    const index = newIndex();
    expect(importInto(index, exportText(newIndex().openExport(), 'base64'))).to.deep.equal({ added: 0, replaced: 0 });
    expect(index.initialized).to.equal(false);
    const text = exportText(filled(4).openExport(), 'base64').replace(/\n/g, '\r\n\n');
    expect(importInto(newIndex(), text).added).to.equal(119);
  });

  it('refuses a body cut short, or longer than its header says, with INVALID_IMPORT', () => {
    const text = exportText(filled(5).openExport(), 'base64');
    const lines = text.split('\n');
    const cut = lines.slice(0, 50).join('\n') + '\n';
    expect(expectApiError(() => read(cut), 'INVALID_IMPORT').details).to.deep.equal({ path: '/50', line: 51 });
    const more = text + lines[1] + '\n';
    expect(expectApiError(() => read(more), 'INVALID_IMPORT').details).to.deep.equal({ path: '/120', line: 121 });
    // Cut inside a line: that line is not JSON.
    expect(expectApiError(() => read(text.slice(0, text.length - 30)), 'INVALID_JSON').details).to.deep.equal({ path: '/119', line: 120 });
    expect(expectApiError(() => read(''), 'INVALID_IMPORT').details).to.deep.equal({ path: '/0', line: 1 });
  });

  it('refuses a header of another format or version, and a bad header field', () => {
    for (const header of [
      '{"id":"a","vector":[1]}',
      '{"format":"tempvec-export","version":2,"dimensions":1,"metric":"l2","vectorType":"float32","count":0}',
      '[1]',
    ]) {
      expect(expectApiError(() => read(header + '\n'), 'INVALID_IMPORT').details).to.deep.equal({ path: '/0', line: 1 });
    }
    const err = expectApiError(
      () => read('{"format":"tempvec-export","version":1,"dimensions":0,"metric":"l2","vectorType":"float32","count":0}\n'),
      'VALIDATION_ERROR',
    );
    expect(err.details!.issues).to.deep.include({ path: '/0/dimensions', message: (err.details!.issues as { message: string }[])[0].message });
  });

  it("names the line of a record that is not JSON, not UTF-8, or breaks add-many's rules", () => {
    const header = '{"format":"tempvec-export","version":1,"dimensions":2,"metric":"cosine","vectorType":"float32","count":3}\n';
    const good = '{"id":"a","vector":[1,2]}\n';
    expect(expectApiError(() => read(header + good + '{"id":\n' + good), 'INVALID_JSON').details).to.deep.equal({ path: '/2', line: 3 });
    const reader = new ImportReader(schemas);
    reader.push(bytes(header + good));
    expect(expectApiError(() => reader.push(Uint8Array.from([0xff, 0x0a])), 'INVALID_JSON').details).to.deep.equal({ path: '/2', line: 3 });
    const bad = expectApiError(() => read(header + good + good + '{"id":"b","vector":[1,"x"]}\n'), 'VALIDATION_ERROR');
    expect((bad.details!.issues as { path: string }[])[0].path).to.equal('/3/vector/1');
    expect(bad.details!.line).to.equal(4);
    const zero = read(header + good + '{"id":"z","vector":[0,0]}\n' + good);
    const err = expectApiError(() => newIndex().upsert(zero.records, importOptions(zero)), 'ZERO_VECTOR');
    expect(err.details).to.deep.equal({ path: '/2/vector' });
    const short = read(header + good + '{"id":"s","vector":[1]}\n' + good);
    expect(expectApiError(() => newIndex().upsert(short.records, importOptions(short)), 'DIMENSION_MISMATCH').details).to.include({ path: '/2/vector' });
  });

  describe('with line limits (the server: MAX_BODY_BYTES a line, MAX_JSON_DEPTH)', () => {
    const header = '{"format":"tempvec-export","version":1,"dimensions":2,"metric":"cosine","vectorType":"float32","count":1}';
    const limits = { maxLineBytes: 300, maxJsonDepth: 3 };
    /** A vector line of exactly `length` bytes (its metadata padded). */
    const lineOf = (length: number) => {
      const bare = '{"id":"a","vector":[1,2],"metadata":{"p":""}}';
      return bare.replace('"p":""', `"p":"${'é'.repeat(Math.floor((length - bare.length) / 2))}${'x'.repeat((length - bare.length) % 2)}"`);
    };
    /** Read `text` through a limited reader, `chunk` bytes at a time. */
    const readLimited = (text: string, chunk: number) => {
      const reader = new ImportReader(schemas, limits);
      const all = bytes(text);
      for (let at = 0; at < all.length; at += chunk) reader.push(all.subarray(at, at + chunk));
      return reader.finish();
    };

    it('takes a line of maxLineBytes (LF or CRLF) and refuses one byte more, nothing imported', () => {
      expect(bytes(lineOf(300)).length).to.equal(300);
      for (const chunk of [1, 7, 1000]) {
        expect(readLimited(`${header}\n${lineOf(300)}\n`, chunk).records).to.have.length(1);
        expect(readLimited(`${header}\r\n${lineOf(300)}\r\n`, chunk).records).to.have.length(1);
        expect(readLimited(`${header}\n${lineOf(300)}`, chunk).records).to.have.length(1);
        const err = expectApiError(() => readLimited(`${header}\n${lineOf(301)}\n`, chunk), 'IMPORT_LINE_TOO_LARGE');
        expect(err.status).to.equal(413);
        expect(err.details).to.deep.equal({ path: '/1', line: 2, limit: 300 });
        expect(err.message).to.include('MAX_BODY_BYTES');
        expectApiError(() => readLimited(`${header}\n${lineOf(300)}\r\r\n`, chunk), 'IMPORT_LINE_TOO_LARGE');
      }
    });

    it('refuses a long line once maxLineBytes + 1 of its bytes arrived, before its end', () => {
      const reader = new ImportReader(schemas, limits);
      reader.push(bytes(`${header}\n`));
      // A CR may be the line's last byte before its LF: it is held (301 bytes) until the next byte shows it is not.
      for (let i = 0; i < 300; i++) reader.push(bytes('x'));
      reader.push(bytes('\r'));
      expectApiError(() => reader.push(bytes('x')), 'IMPORT_LINE_TOO_LARGE');
      const plain = new ImportReader(schemas, limits);
      expectApiError(() => plain.push(bytes(`${header}\n${'x'.repeat(10_000)}`)), 'IMPORT_LINE_TOO_LARGE');
    });

    it('refuses a line nested deeper than MAX_JSON_DEPTH around its metadata (1 + maxJsonDepth levels), naming the place', () => {
      const deep = (levels: number) => `{"id":"a","vector":[1,2],"metadata":${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}}`;
      expect(readLimited(`${header}\n${deep(3)}\n`, 50).records[0].metadata).to.deep.equal({ a: { a: {} } });
      const err = expectApiError(() => readLimited(`${header}\n${deep(4)}\n`, 50), 'VALIDATION_ERROR');
      expect(err.details).to.deep.include({ path: '/1/metadata/a/a/a', line: 2 });
      // Anywhere in the line, before the record schema sees it.
      // A line nested 1e5 deep: scanned before parsing, refused at the path the parsed line would give.
      const far = `{"id":"a","metadata":{"b":${'['.repeat(1e5)}${']'.repeat(1e5)}},"vector":[1,2]}`;
      const expected = `/1/${firstTooDeep(JSON.parse(far), 4)!.join('/')}`;
      for (const chunk of [50, 1 << 20]) {
        const wide = new ImportReader(schemas, { ...limits, maxLineBytes: 1e6 });
        const all = bytes(`${header}\n${far}\n`);
        const err = expectApiError(() => {
          for (let at = 0; at < all.length; at += chunk) wide.push(all.subarray(at, at + chunk));
        }, 'VALIDATION_ERROR');
        expect(err.details).to.deep.include({ path: expected, line: 2 });
      }
      const nested = expectApiError(() => readLimited(`${header}\n{"id":"a","vector":[[[[[1]]]]]}\n`, 50), 'VALIDATION_ERROR');
      expect(nested.message).to.include('nested deeper than 4 levels');
      expect(nested.details!.path).to.equal('/1/vector/0/0/0');
    });
  });
});
