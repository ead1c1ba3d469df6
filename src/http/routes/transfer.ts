// GET /vectors/export and POST /vectors/import: a whole session out and in,
// as NDJSON (src/export/format.ts).
//
// The export streams a consistent snapshot (VectorIndex.openExport) in
// pieces pulled by the socket (src/export/export-stream.ts), its window held
// in the memory budget's answers in flight until it ends or its client goes
// away. It has no MAX_ANSWER_BYTES: it is how a whole session leaves, and
// back-pressure bounds what it holds, not its length.
// The import reads its body as it arrives, within MAX_IMPORT_BYTES,
// validating each line (at most MAX_BODY_BYTES and MAX_JSON_DEPTH, as a JSON
// body), its reservation in the memory budget held until it is written;
// checks the whole in slices (its write turn held), encodes its log records in slices
// (DATA_DIR), then applies it in one step (checked again if the session
// changed meanwhile), so readers and a restart see all of it or nothing.
// Like every body, it is admitted and cut when slower than
// MIN_BODY_BYTES_PER_SEC by ../admission.ts (408 JSON).
import type { Context } from 'koa';
import * as v from 'valibot';
import { apiError } from '../../errors.js';
import { EXPORT_WINDOW_BYTES, exportStream } from '../../export/export-stream.js';
import { NDJSON_TYPE } from '../../export/format.js';
import { ImportReader, importOptions, type MetadataMeasure, type ParsedImport } from '../../export/import-reader.js';
import type { UpsertPlan, UpsertResult } from '../../index/types.js';
import type { Session } from '../../sessions/session.js';
import type { SessionStore } from '../../sessions/session-store.js';
import { VECTOR_BYTES } from '../../embedding/embedding-pool.js';
import { embedRecordsAhead } from '../../sessions/embed-ahead.js';
import { analyzerChanged, STALE_TEXTS, withTextsAhead } from '../../sessions/texts-ahead.js';
import { requestError } from '../../schemas/request-error.js';
import { reserveBody } from '../body/index.js';
import type { BodyArrival } from '../body/arrival.js';
import { replyWithSession, stateOf, turnOwnerOf, type RouteDeps } from '../context.js';
import { REQUEST_SLICE_MS, Slices } from '../../limits/slices.js';

/** 415 unless the body is NDJSON, uncompressed. */
function assertNdjson(ctx: Context): void {
  if (!ctx.is(NDJSON_TYPE)) {
    throw apiError('UNSUPPORTED_MEDIA_TYPE', `send the export as NDJSON with content-type: ${NDJSON_TYPE}`, { contentType: ctx.get('content-type') || null });
  }
  const encoding = ctx.get('content-encoding');
  if (encoding !== '' && encoding.toLowerCase() !== 'identity') {
    throw apiError('UNSUPPORTED_MEDIA_TYPE', `content-encoding ${encoding} is not accepted; send the body uncompressed`);
  }
}

/**
 * Feed the body to `reader` as it arrives; 413 once it passes `limit` bytes (announced or read). `arrival` holds its
 * bytes as they come. Chunks already buffered come one microtask after another: the loop is given back every
 * REQUEST_SLICE_MS of reading (each line is parsed, checked and its metadata measured; 50,000 wide lines held it 30-45 ms).
 */
async function readImport(ctx: Context, reader: ImportReader, limit: number, arrival?: BodyArrival): Promise<void> {
  const tooLarge = () => apiError('PAYLOAD_TOO_LARGE', `the import body is larger than ${limit} bytes (MAX_IMPORT_BYTES)`, { limit });
  if (Number(ctx.get('content-length') || 0) > limit) throw tooLarge();
  const slices = new Slices(REQUEST_SLICE_MS, { owner: turnOwnerOf(ctx) });
  let bytes = 0;
  try {
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > limit) throw tooLarge();
      arrival?.received(chunk.length);
      reader.push(chunk);
      await slices.pause();
    }
  } catch (err) {
    if ((err as { code?: string }).code === 'ECONNRESET' || (err as Error).message === 'aborted') {
      throw apiError('INVALID_JSON', 'the import body ended early (the connection was cut)');
    }
    throw err;
  }
}

/** The memory checks of writes.prepareImport, for a plan still current: other sessions may have grown meanwhile. */
function recheckMemory(store: SessionStore, session: Session, plan: UpsertPlan): void {
  store.assertMemoryBudget(session, session.index.memoryBytesAfter(plan), 'change', plan.heapBytesAdded, plan.metadataBytesAdded);
  store.assertWasmMemoryFor(session);
}

/**
 * An import whose texts were analysed ahead: checked in a write turn, its log records encoded in slices
 * outside any turn, then checked again and applied in one turn. STALE_TEXTS when a turn finds the
 * session's analyzer changed since the texts were analysed (withTextsAhead analyses them again).
 */
async function writeImport(ctx: Context, store: SessionStore, session: Session, parsed: ParsedImport): Promise<UpsertResult | typeof STALE_TEXTS> {
  const { writes } = store;
  const { timings } = stateOf(ctx);
  const stale = () => analyzerChanged(session.index, importOptions(parsed));
  const checked = await writes.inLoopTurn(session, async () =>
    stale() ? STALE_TEXTS : timings.measure('capacityCheckMs', () => writes.prepareImport(session, parsed)),
  );
  if (checked === STALE_TEXTS) return checked;
  let plan = checked;
  const encodeStart = performance.now();
  const encoded = plan ? await store.encodeImport(plan) : undefined;
  timings.set('importEncodeMs', Math.round((performance.now() - encodeStart) * 1000) / 1000);
  return writes.inLoopTurn(session, async () => {
    if (stale()) return STALE_TEXTS;
    return timings.measure('importMs', async () => {
      // Other changes may have come in meanwhile: the whole plan again when this session changed
      // (its log records are then written anew if it differs), else the memory checks.
      if (plan && !session.index.isCurrent(plan)) plan = await writes.prepareImport(session, parsed);
      else if (plan) recheckMemory(store, session, plan);
      return plan ? writes.importPlan(session, plan, encoded) : { added: 0, replaced: 0 };
    });
  });
}

/**
 * The import with its lines without a vector given the embedding of their text (embedMs), MAX_ADD_MANY_BATCH
 * texts at a time (what a token may have in flight covers that); the vectors held in the memory budget until
 * the answer is sent.
 */
async function embeddedImport(ctx: Context, { embedder, store, config }: RouteDeps, parsed: ParsedImport): Promise<ParsedImport> {
  const missing = parsed.records.filter((record) => record.vector === undefined).length;
  if (missing === 0) return parsed;
  const { session, timings } = stateOf(ctx);
  const held = store.budget.reserve('embedding', missing * VECTOR_BYTES, "the server's memory budget is used up; nothing was imported, try again later");
  ctx.res.once('close', () => held.release());
  const options = importOptions(parsed);
  const { records, options: embedded } = await timings.measureAsync('embedMs', () =>
    embedRecordsAhead(embedder, session, parsed.records, options, config.maxAddManyBatch),
  );
  return { ...parsed, records, header: { ...parsed.header, embedding: embedded.embeddedWith ?? parsed.header.embedding } };
}

export function transferRoutes(deps: RouteDeps): void {
  const { router, store, schemas, config, auth, importSlots } = deps;
  router.get('/vectors/export', auth, async (ctx) => {
    const query = v.safeParse(schemas.ExportQuerySchema, { ...ctx.query });
    if (!query.success) throw requestError(query.issues, 'query');
    const { session, timings } = stateOf(ctx);
    await session.settled(); // opened after an add applied in slices, never halfway through
    const held = store.budget.reserve(
      'answers',
      EXPORT_WINDOW_BYTES,
      "the server's memory budget is used up by answers in flight; nothing was exported, try again shortly",
    );
    // Copies the snapshot keeps of vectors changed before it reached them count with it.
    const exp = timings.measure('exportOpenMs', () => session.index.openExport((bytes) => held.grow(bytes)));
    // The body is streamed: its timings go in Server-Timing only (no JSON envelope to carry them).
    const { dbOpenMs, exportOpenMs } = timings.entries;
    ctx.set(
      'Server-Timing',
      `requestLatency;dur=${timings.elapsed()}${dbOpenMs === undefined ? '' : `, dbOpen;dur=${dbOpenMs}`}, exportOpen;dur=${exportOpenMs}`,
    );
    ctx.type = NDJSON_TYPE;
    ctx.body = exportStream(exp, query.output.vectorEncoding, () => held.release());
  });

  router.post('/vectors/import', auth, importSlots, async (ctx) => {
    assertNdjson(ctx);
    const { session, timings } = stateOf(ctx);
    // Each line's metadata measured as it is read, kept as its JSON text (import-reader.ts).
    const measure: MetadataMeasure = (metadata) => session.index.measureMetadata(metadata);
    const reader = new ImportReader(schemas, { maxLineBytes: config.maxBodyBytes, maxJsonDepth: config.maxJsonDepth }, measure);
    const start = performance.now();
    // Held until the import is written: its records, prepared texts and log records live until then.
    const reservation = reserveBody(ctx, store.budget, config.maxImportBytes);
    try {
      await readImport(ctx, reader, config.maxImportBytes, reservation);
      const parsed = await embeddedImport(ctx, deps, reader.finish());
      const mutation = await withTextsAhead(session, parsed.records, importOptions(parsed), (preparedTexts) => {
        parsed.preparedTexts = preparedTexts;
        timings.set('importReadMs', Math.round((performance.now() - start) * 1000) / 1000);
        return writeImport(ctx, store, session, parsed);
      });
      replyWithSession(ctx, store, { mutation });
    } finally {
      reservation?.release();
    }
  });
}
