// The rows of an index: id <-> row, each id's place in the insertion order,
// and the sequence every write takes. Rows stay contiguous: removing row r
// moves the last row into r (the move the other stores follow), so a scan is
// always over rows [0, size).
import { ROW_HEAP_BYTES, stringHeapBytes } from './heap-size.js';
import { InsertionOrder } from './insertion-order.js';

/** A removal: the last row moves into `row` (nothing moves when they are equal); every store of rows does the same. */
export interface RowMove {
  readonly row: number;
  readonly last: number;
}

/** The row table as a search, a listing or an export reads it. */
export interface RowsRead {
  readonly size: number;
  /** The seq the next write takes (never reset, so seqs ascend for the index's whole life). */
  readonly nextSeq: number;
  readonly order: Pick<InsertionOrder, 'seqOf' | 'walk' | 'pin'>;
  rowOf(id: string): number | undefined;
  idAt(row: number): string;
  forEach(visit: (id: string, row: number) => void): void;
}

export class RowTable implements RowsRead {
  private readonly rows = new Map<string, number>();
  private ids: string[] = [];
  /** Estimated JS heap of the rows: ids and their bookkeeping (rowHeapBytes). */
  private heap = 0;
  /** Insertion order (the seq of every write) for listing, export and ties. */
  readonly order = new InsertionOrder();
  private seq = 0;

  get size(): number {
    return this.ids.length;
  }

  get nextSeq(): number {
    return this.seq;
  }

  /** Estimated JS heap: the ids and their bookkeeping (heap-size.ts), and the insertion log's dead entries. */
  get heapBytes(): number {
    return this.heap + this.order.heapBytes;
  }

  rowOf(id: string): number | undefined {
    return this.rows.get(id);
  }

  idAt(row: number): string {
    return this.ids[row];
  }

  forEach(visit: (id: string, row: number) => void): void {
    for (const [id, row] of this.rows) visit(id, row);
  }

  /** A new id in the next row, written at `seq`; its row. */
  add(id: string, seq: number): number {
    const row = this.ids.length;
    this.rows.set(id, row);
    this.ids.push(id);
    this.heap += rowHeapBytes(id);
    this.order.write(id, seq);
    return row;
  }

  /** The id of `row` written again, at `seq` (it moves to the end of the order). */
  rewrite(row: number, seq: number): void {
    this.order.write(this.ids[row], seq); // the stored string, not this request's copy
  }

  /** The next write's seqs follow a write of `count` records. */
  advance(count: number): void {
    this.seq += count;
  }

  remove(row: number): RowMove {
    const id = this.ids[row];
    const last = this.ids.length - 1;
    this.order.remove(id);
    this.rows.delete(id);
    this.heap -= rowHeapBytes(id);
    if (row !== last) {
      const movedId = this.ids[last];
      this.ids[row] = movedId;
      this.rows.set(movedId, row);
    }
    this.ids.pop();
    return { row, last };
  }

  clear(): void {
    this.order.clear();
    this.rows.clear();
    this.ids = [];
    this.heap = 0;
  }
}

/** A stored vector's id and bookkeeping in the JS heap (its metadata aside). */
export const rowHeapBytes = (id: string) => ROW_HEAP_BYTES + stringHeapBytes(id);
