// searchL2Bounded, the single-query l2 search by dot-loop bounds and an exact
// pass, against the kernel's plain l2 scan (search() with one query): the
// same rows and bit for bit the same keys, and every row's stored bound at or
// above its exact key, on data chosen to strain the bound: exact ties,
// duplicates of the query, zero rows, norms from 1e-20 to 1e16 side by side,
// near-duplicates that differ in the last bits, subnormal products.
import { expect } from 'chai';
import { instantiateKernel, type KernelExports } from '../../src/kernel/kernel-module.js';
import { layoutFor, pagesFor, scratchFor, type Layout } from '../../src/kernel/layout.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { runKernelSearch, type SingleQueryPathName } from '../../src/kernel/search-path.js';
import { randomInt, seededRng, shuffled, type Rng } from '../helpers/random.js';

/** Rows written straight into one kernel memory, with the sequences given (scrambled against the row order). */
class Loaded {
  readonly memory = new WebAssembly.Memory({ initial: 1 });
  readonly kernel: KernelExports;
  readonly layout: Layout;

  constructor(
    readonly rows: Float32Array[],
    readonly dim: number,
    seqs: number[],
  ) {
    this.kernel = instantiateKernel(loadKernelModule(), this.memory);
    this.layout = layoutFor(this.kernel.heapBase(), dim, rows.length);
    this.grow(this.layout.scratch);
    const buffer = this.memory.buffer;
    rows.forEach((row, r) => {
      new Float32Array(buffer, this.layout.vectors + r * dim * 4, dim).set(row);
    });
    this.kernel.storeInverseNorms(this.layout.vectors, dim, 0, rows.length, this.layout.invNorms);
    new Uint32Array(buffer, this.layout.seqs, rows.length).set(seqs);
  }

  private grow(bytes: number) {
    const pages = pagesFor(bytes) - pagesFor(this.memory.buffer.byteLength);
    if (pages > 0) this.memory.grow(pages);
  }

  /** Write the query and row list into scratch that has room for `bounded` bounds. */
  private prepare(query: Float32Array, k: number, rowList: Int32Array | null, bounded: number) {
    const s = scratchFor(this.layout, 1, rowList ? rowList.length : 0, k, bounded, bounded > 0);
    this.grow(s.end);
    new Float32Array(this.memory.buffer, s.queries, this.dim).set(query);
    if (rowList) new Int32Array(this.memory.buffer, s.rowList, rowList.length).set(rowList);
    return s;
  }

  private hits(s: { outRows: number; outKeys: number }, kept: number) {
    return {
      rows: Array.from(new Int32Array(this.memory.buffer, s.outRows, kept)),
      keys: Array.from(new Float32Array(this.memory.buffer, s.outKeys, kept)),
    };
  }

  private run(scratch: ReturnType<Loaded['prepare']>, path: SingleQueryPathName, rowList: Int32Array | null, count: number, query: Float32Array, k: number) {
    return runKernelSearch({
      kernel: this.kernel,
      layout: this.layout,
      scratch,
      path,
      withRowList: rowList !== null,
      count,
      queries: query,
      queryCount: 1,
      metricCode: this.kernel.METRIC_L2.value,
      k,
    });
  }

  plain(query: Float32Array, k: number, rowList: Int32Array | null) {
    const s = this.prepare(query, k, rowList, 0);
    const count = rowList ? rowList.length : this.rows.length;
    this.run(s, 'plain', rowList, count, query, k);
    return this.hits(s, Math.min(k, count));
  }

  /** The bounded search's hits, how many rows it scored exactly, and each scanned row's stored bound (by row). */
  bounded(query: Float32Array, k: number, rowList: Int32Array | null) {
    const count = rowList ? rowList.length : this.rows.length;
    const s = this.prepare(query, k, rowList, count);
    const listed = this.run(s, 'bounded', rowList, count, query, k);
    // Bounds are stored as the scan visits rows: list position g + l * quarter at 4g + l, the count % 4 tail in place.
    const stored = new Float32Array(this.memory.buffer, s.keys, count);
    const quarter = count >> 2;
    const boundOfRow = new Map<number, number>();
    for (let p = 0; p < count; p++) {
      const position = p < quarter * 4 ? (p >> 2) + (p & 3) * quarter : p;
      boundOfRow.set(rowList ? rowList[position] : position, stored[p]);
    }
    return { ...this.hits(s, Math.min(k, count)), listed, boundOfRow };
  }
}

type Kind = 'uniform' | 'ties' | 'scales' | 'near-duplicates' | 'tiny' | 'huge';

function rowsOf(kind: Kind, rng: Rng, n: number, dim: number): Float32Array[] {
  const uniform = (scale: number) => Float32Array.from({ length: dim }, () => (rng() * 2 - 1) * scale);
  switch (kind) {
    case 'uniform':
      return Array.from({ length: n }, () => uniform(1));
    case 'ties': {
      // few distinct small integer rows: many exact ties, zero rows among them
      const distinct = Array.from({ length: 7 }, (_, i) => (i === 0 ? new Float32Array(dim) : Float32Array.from({ length: dim }, () => randomInt(rng, 3) - 1)));
      return Array.from({ length: n }, () => distinct[randomInt(rng, distinct.length)].slice());
    }
    case 'scales': // every row its own scale, 1e-20 to 1e15, and some zero rows
      return Array.from({ length: n }, () => (rng() < 0.05 ? new Float32Array(dim) : uniform(10 ** (randomInt(rng, 36) - 20))));
    case 'near-duplicates': {
      // one large row, copies that differ from it in the last bits
      const base = uniform(1e3);
      return Array.from({ length: n }, () => base.map((x) => x * (1 + (rng() - 0.5) * 4e-7)));
    }
    case 'tiny': // products underflow to subnormals and 0
      return Array.from({ length: n }, () => uniform(1e-22));
    case 'huge': // components at the service's bound
      return Array.from({ length: n }, () => uniform(1e16));
  }
}

const KINDS: Kind[] = ['uniform', 'ties', 'scales', 'near-duplicates', 'tiny', 'huge'];

describe('kernel: the bounded l2 search against the plain l2 scan', () => {
  it("gives the plain scan's rows and keys; no bound is below its key", function () {
    this.timeout(60_000);
    const rng = seededRng(2026);
    let cases = 0;
    for (const kind of KINDS) {
      for (const dim of [16, 19, 64, 131, 384]) {
        const n = kind === 'uniform' && dim === 384 ? 3000 : 400 + randomInt(rng, 400);
        const rows = rowsOf(kind, rng, n, dim);
        const seqs = shuffled(
          rng,
          Array.from({ length: n }, (_, i) => i * 2),
        );
        const loaded = new Loaded(rows, dim, seqs);
        for (const k of [1, 10, 49, Math.floor(n / 8), Math.floor(n / 8) + 1]) {
          const useList = rng() < 0.5;
          const rowList = useList
            ? Int32Array.from(
                shuffled(
                  rng,
                  Array.from({ length: n }, (_, r) => r),
                ).slice(0, Math.max(k * 8, Math.floor(n * 0.9))),
              )
            : null;
          const count = rowList ? rowList.length : n;
          // A query near a stored row (or that row itself: an exact match, key -0).
          const near = rows[randomInt(rng, n)];
          const query = rng() < 0.3 ? near.slice() : near.map((x) => x + (rng() - 0.5) * Math.abs(x) * 1e-3);
          const expected = loaded.plain(query, k, rowList);
          const got = loaded.bounded(query, k, rowList);
          const label = `${kind} dim ${dim} n ${n} k ${k} ${useList ? 'list' : 'all'}`;
          expect(got.rows, label).to.deep.equal(expected.rows);
          expect(
            got.keys.map((x) => (Object.is(x, -0) ? 0 : x)),
            label,
          ).to.deep.equal(expected.keys.map((x) => (Object.is(x, -0) ? 0 : x)));
          expect(got.listed, label).to.be.at.least(Math.min(k, count)).and.at.most(count);
          if (count >= 8 * k) {
            // Every row's exact key (the plain scan's, all of them) is at most its bound.
            const all = loaded.plain(query, count, rowList);
            all.rows.forEach((row, i) => {
              const bound = got.boundOfRow.get(row)!;
              if (!(bound >= all.keys[i])) expect.fail(`${label}: row ${row} key ${all.keys[i]} above its bound ${bound}`);
            });
          }
          cases++;
        }
      }
    }
    expect(cases).to.equal(KINDS.length * 5 * 5);
  });

  it('scores few rows exactly on ordinary data (the bound is tight enough to matter)', () => {
    const rng = seededRng(7);
    const rows = rowsOf('uniform', rng, 4000, 384);
    const loaded = new Loaded(
      rows,
      384,
      Array.from({ length: 4000 }, (_, i) => i),
    );
    for (let q = 0; q < 5; q++) {
      const query = Float32Array.from({ length: 384 }, () => rng() * 2 - 1);
      const { listed } = loaded.bounded(query, 10, null);
      expect(listed).to.be.at.least(10).and.at.most(40);
    }
  });

  it('runs the plain scan below 8 rows per result (nothing bounded)', () => {
    const rng = seededRng(8);
    const rows = rowsOf('uniform', rng, 79, 32);
    const loaded = new Loaded(
      rows,
      32,
      Array.from({ length: 79 }, (_, i) => i),
    );
    const query = rows[3].slice();
    const got = loaded.bounded(query, 10, null);
    expect(got.listed).to.equal(79);
    expect(got.rows).to.deep.equal(loaded.plain(query, 10, null).rows);
    expect(got.rows[0]).to.equal(3);
  });
});
