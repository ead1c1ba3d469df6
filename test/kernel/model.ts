// A KernelInstance driven the way VectorIndex drives it (dense rows, swap-remove
// deletes, a sequence number per write), with a plain copy of every row beside
// it so tests can compare the kernel with the reference search.
import type { Metric } from '../../src/config.js';
import { KernelInstance } from '../../src/kernel/kernel-instance.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import type { ReferenceRow, ScoredId } from '../helpers/reference.js';

export class KernelModel {
  readonly kernel: KernelInstance;
  readonly rows: ReferenceRow[] = [];
  private nextSeq = 0;
  private nextId = 0;

  constructor(
    readonly dim: number,
    readonly metric: Metric,
    maxCapacity = 100_000,
    module = loadKernelModule(),
  ) {
    this.kernel = new KernelInstance(module, dim, metric, maxCapacity);
  }

  add(values: number[]): string {
    const id = `v${this.nextId++}`;
    const row = this.rows.length;
    this.kernel.ensureCapacity(row + 1);
    const stored = Float32Array.from(values);
    this.kernel.writeRows([row], [stored], this.nextSeq);
    this.rows.push({ id, vector: stored, seq: this.nextSeq++ });
    return id;
  }

  /** Overwrite row `row` in place; it counts as a new insertion for ties. */
  replace(row: number, values: number[]): void {
    const stored = Float32Array.from(values);
    this.kernel.writeRows([row], [stored], this.nextSeq);
    this.rows[row] = { id: this.rows[row].id, vector: stored, seq: this.nextSeq++ };
  }

  /** Swap-remove, as VectorIndex does: the last row moves into the hole. */
  delete(row: number): void {
    const last = this.rows.length - 1;
    if (row !== last) {
      this.kernel.moveRow(last, row);
      this.rows[row] = this.rows[last];
    }
    this.rows.pop();
  }

  /** Top-k per query over all rows, or over `rowList`; results as ids and scores. */
  search(queries: number[][], k: number, rowList: number[] | null = null): ScoredId[][] {
    const packed = new Float32Array(queries.length * this.dim);
    queries.forEach((q, j) => {
      packed.set(q, j * this.dim);
    });
    const hits = this.kernel.search({
      queries: packed,
      queryCount: queries.length,
      k,
      count: this.rows.length,
      rowList: rowList ? Int32Array.from(rowList) : null,
    });
    return queries.map((_, j) => {
      const list: ScoredId[] = [];
      for (let i = 0; i < hits.perQuery; i++) {
        const at = j * hits.perQuery + i;
        list.push({ id: this.rows[hits.rows[at]].id, score: hits.scores[at] });
      }
      return list;
    });
  }
}
