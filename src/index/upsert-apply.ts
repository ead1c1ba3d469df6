// Applying an upsert plan: the memory grown first (the only step that can
// still fail), the journal told (`grown`; applyUpsertSliced's `logged` may be a
// promise), then the rows written to every store, at once (applyUpsert) or in
// slices that give the event loop back (applyUpsertSliced).
// Part of the index's writer: VectorIndex owns the one UpsertApplier of its state.
import { KernelInstance } from '../kernel/kernel-instance.js';
import type { Slices } from '../limits/slices.js';
import type { ExportSnapshots } from './export-snapshots.js';
import type { Metadata } from './filter.js';
import type { IndexState } from './index-read.js';
import type { JsonText } from './json-size.js';
import type { UpsertPlan, UpsertResult, VectorInput } from './types.js';

/** Rows an upsert in slices writes between two reads of the clock (a row costs well under a millisecond). */
const ROWS_PER_CLOCK_READ = 4;

/** The metadata of a record given without any. */
const NO_METADATA: Metadata = Object.freeze({});

/** A record's metadata object: its own, or parsed from its measured text where a reader kept only that (an import's lines). */
const metadataOf = (record: VectorInput, json: JsonText | null): Metadata =>
  record.metadata ?? (json === null ? NO_METADATA : (JSON.parse(json.text) as Metadata));
const noop = () => {};

export class UpsertApplier {
  /** An upsert written in slices, until its last row is in (reads of the session wait for it: `applying`). */
  private inSlices: Promise<UpsertResult> | null = null;

  constructor(
    private readonly module: WebAssembly.Module,
    private readonly state: IndexState,
    private readonly exports: ExportSnapshots,
  ) {}

  /**
   * Write a batch that prepareUpsert accepted (with no change to the index in
   * between), whole, in the caller's tick. `grown` runs once the memory has
   * room for it, before any change (a log written at once: a change is logged
   * only once nothing can fail for want of memory); if it throws, nothing
   * changes but a memory grown bigger.
   */
  applyUpsert(plan: UpsertPlan, grown?: () => void): UpsertResult {
    const kernel = this.grownFor(plan);
    grown?.();
    return this.writeUpsert(plan, kernel);
  }

  /**
   * applyUpsert() in slices that give the event loop back, after `logged`
   * (a session's journal), which may write in pieces: a promise, and the
   * batch is written once it settles, not if it rejects; nothing else may
   * change the index meanwhile. Truly either: a batch logged at once and
   * done in its first slice is written in the caller's tick, no promise.
   */
  applyUpsertSliced(plan: UpsertPlan, slices: Slices, logged?: () => Promise<void> | undefined): UpsertResult | Promise<UpsertResult> {
    const kernel = this.grownFor(plan);
    const pieces = logged?.();
    if (!pieces) return this.writeUpsertSliced(plan, kernel, slices);
    return pieces.then(() => {
      if (plan.version !== this.state.version) throw new Error('the index changed while an upsert was logged');
      return this.writeUpsertSliced(plan, kernel, slices);
    });
  }

  /** The kernel with room for `plan`: growing is the only step that can still fail (out of memory), so it comes before any write. */
  private grownFor(plan: UpsertPlan): KernelInstance {
    if (plan.version !== this.state.version) throw new Error('the index changed since this upsert was prepared');
    const kernel = this.state.kernel ?? new KernelInstance(this.module, plan.dimensions, plan.metric, this.state.maxVectors, plan.vectorType);
    kernel.ensureCapacity(plan.rowsNeeded);
    return kernel;
  }

  /**
   * An upsert being written in slices, until it is all in: a read outside the
   * session's gate (get, has, export, ...) waits for it, so it sees all of the
   * change or none of it. Null when none is.
   */
  get applying(): Promise<unknown> | null {
    return this.inSlices;
  }

  /** Once no upsert is being written in slices (undefined when none is: the caller goes on in its tick). */
  settled(): Promise<void> | undefined {
    return this.inSlices ? this.whenApplied() : undefined;
  }

  private async whenApplied(): Promise<void> {
    // Another may start as this one ends (the next write waiting): wait for it too. A failed one is its writer's to report.
    while (this.inSlices) await this.inSlices.then(noop, noop);
  }

  /** applyUpsert's writes, once `kernel` has room for them, in one step. */
  private writeUpsert(plan: UpsertPlan, kernel: KernelInstance): UpsertResult {
    const result = this.startUpsert(plan, kernel);
    this.writeRows(plan, kernel, 0, plan.records.length, result);
    return this.settleUpsert(plan, result);
  }

  /**
   * applyUpsertSliced's writes: the first slice in the caller's tick (a
   * small batch is done in it), the rest after pauses. Every step is bounded
   * the same in both: a few rows, then their texts' terms a bounded step at a
   * time (four rows' 32 KiB texts added whole once held the caller's tick).
   */
  private writeUpsertSliced(plan: UpsertPlan, kernel: KernelInstance, slices: Slices): UpsertResult | Promise<UpsertResult> {
    const steps = this.upsertSteps(plan, kernel);
    for (let step = steps.next(); ; step = steps.next()) {
      if (step.done) return step.value;
      if (slices.due()) break;
    }
    const rest = this.writeRest(steps, slices);
    this.inSlices = rest;
    return rest;
  }

  /** The upsert's steps from the second slice on; nothing else changes the index meanwhile (the session's turn is held). */
  private async writeRest(steps: Generator<void, UpsertResult, void>, slices: Slices): Promise<UpsertResult> {
    try {
      return await slices.run(steps);
    } finally {
      this.inSlices = null;
    }
  }

  /** Before an upsert's first row: the kernel and the config it fixes; plans prepared before it are stale. */
  private startUpsert(plan: UpsertPlan, kernel: KernelInstance): UpsertResult {
    this.state.kernel = kernel;
    this.state.config = {
      ...this.state.config,
      dimensions: plan.dimensions,
      metric: plan.metric,
      vectorType: plan.vectorType,
      analyzer: plan.analyzer,
      embedding: plan.embedding,
    };
    this.state.version++;
    return { added: 0, replaced: 0 };
  }

  /** An upsert as steps: ROWS_PER_CLOCK_READ rows, then their texts' terms in bounded steps; the keyword index's compaction in steps last. */
  private *upsertSteps(plan: UpsertPlan, kernel: KernelInstance): Generator<void, UpsertResult, void> {
    const result = this.startUpsert(plan, kernel);
    const count = plan.records.length;
    for (let from = 0; from < count; ) {
      from = this.writeRows(plan, kernel, from, Math.min(count, from + ROWS_PER_CLOCK_READ), result, true);
      yield* this.state.texts.addsSteps();
      if (from < count) yield;
    }
    // settleUpsert then finds nothing to compact.
    yield* this.state.texts.settleSteps(this.state.rows.size);
    return this.settleUpsert(plan, result);
  }

  /** Rows [from, to) of an upsert: ids, insertion order, metadata, text, then their vectors in one pass; `to`. `textsLater`: their terms left to TextStore.addsSteps(). */
  private writeRows(plan: UpsertPlan, kernel: KernelInstance, from: number, to: number, result: UpsertResult, textsLater = false): number {
    const { records, vectors } = plan;
    const { rows: table, metadata, texts, expiry } = this.state;
    const seq = table.nextSeq;
    const rows = new Array<number>(to - from);
    const now = this.state.clock();
    for (let i = from; i < to; i++) {
      const { id } = records[i];
      let row = table.rowOf(id);
      if (row === undefined) {
        row = table.add(id, seq + i);
        result.added++;
      } else {
        // An expired record not yet swept is gone: writing its id again adds a record.
        if (expiry.isLive(row, now)) result.replaced++;
        else result.added++;
        this.exports.beforeChange(id, row);
        table.rewrite(row, seq + i);
      }
      rows[i - from] = row;
      metadata.set(row, metadataOf(records[i], plan.metadataJson[i]), plan.metadataJson[i], this.state.rows.size);
      texts.set(row, plan.texts[i], seq + i, this.state.rows.size, textsLater);
      // A record written without ttlMs has none, whatever it had (as Redis' SET clears a key's TTL).
      expiry.set(row, plan.ttls?.[i] ?? null);
    }
    // One pass over linear memory for the rows (views made once, not per row).
    kernel.writeRows(rows, from === 0 && to === records.length ? vectors : vectors.slice(from, to), seq + from);
    return to;
  }

  /** After an upsert's last row: the keyword index compacts once for the batch, and the next write's seqs follow. */
  private settleUpsert(plan: UpsertPlan, result: UpsertResult): UpsertResult {
    this.state.texts.settle(this.state.rows.size);
    this.state.rows.advance(plan.records.length);
    return result;
  }
}
