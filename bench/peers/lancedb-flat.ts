// LanceDB (@lancedb/lancedb, a dev dependency) for bench:peers: one table in
// a temporary directory with an id, a bucket (id % 100, for a 1% filter) and
// the vector; exact search (bypassVectorIndex), cosine, only the id fetched.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Lance = typeof import('@lancedb/lancedb');
type Arrow = typeof import('apache-arrow');
type LanceTable = Awaited<ReturnType<Awaited<ReturnType<Lance['connect']>>['createTable']>>;

/** The installed version (the package exports no package.json). */
const installedVersion = (): string => JSON.parse(readFileSync(new URL('../package.json', import.meta.resolve('@lancedb/lancedb')), 'utf8')).version;

export class LanceFlat {
  private constructor(
    private readonly table: LanceTable,
    private readonly dir: string,
    readonly version: string,
  ) {}

  /** The table over `vectors` (row r has id r, bucket r % 100), or why LanceDB is skipped. */
  static async start(vectors: Float32Array, dim: number): Promise<LanceFlat | { skip: string }> {
    let lance: Lance, arrow: Arrow;
    try {
      lance = await import('@lancedb/lancedb');
      // The CommonJS build, the one LanceDB requires (its checks are instanceof).
      arrow = createRequire(import.meta.url)('apache-arrow');
    } catch (err) {
      return { skip: `@lancedb/lancedb does not load (npm ci installs it): ${(err as Error).message.split('\n')[0]}` };
    }
    const n = vectors.length / dim;
    const ids = Int32Array.from({ length: n }, (_, r) => r);
    const buckets = ids.map((r) => r % 100);
    const vectorType = new arrow.FixedSizeList(dim, new arrow.Field('item', new arrow.Float32(), true));
    const vectorData = arrow.makeData({ type: vectorType, length: n, child: arrow.makeData({ type: new arrow.Float32(), length: n * dim, data: vectors }) });
    const data = new arrow.Table({ id: arrow.makeVector(ids), bucket: arrow.makeVector(buckets), vector: arrow.makeVector(vectorData) });
    const dir = mkdtempSync(join(tmpdir(), 'tempvec-lancedb-'));
    try {
      const db = await lance.connect(dir);
      const table = await db.createTable('vectors', data);
      return new LanceFlat(table, dir, installedVersion());
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** The k nearest ids by cosine, scanning every row (or the rows `where` keeps: a prefilter). */
  async search(query: Float32Array, k: number, where?: string): Promise<number[]> {
    let q = this.table.vectorSearch(query).distanceType('cosine').limit(k).bypassVectorIndex().select(['id', '_distance']);
    if (where) q = q.where(where);
    return (await q.toArray()).map((row) => Number(row.id));
  }

  close(): void {
    this.table.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
