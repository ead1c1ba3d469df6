// GET /vectors/export and POST /vectors/import: a whole session out and in,
// as NDJSON (src/export/format.ts).
//
// The export streams a consistent snapshot (VectorIndex.openExport) in
// pieces pulled by the socket (src/export/export-stream.ts), its window held
// in the memory budget's answers in flight until it ends or its client goes
// away. It has no MAX_ANSWER_BYTES: it is how a whole session leaves, and
// back-pressure bounds what it holds, not its length.
// The import reads its body as it arrives, within MAX_IMPORT_BYTES,
// validating each line; checks the whole, encodes its log records in slices
// (DATA_DIR), then applies it in one step (checked again if the session
// changed meanwhile), so readers and a restart see all of it or nothing.
// Like every body, it is admitted and cut when slower than
// MIN_BODY_BYTES_PER_SEC by ../admission.ts (408 JSON).
import type { Context } from 'koa';
import * as v from 'valibot';
import { apiError } from '../../errors.js';
import { EXPORT_WINDOW_BYTES, exportStream } from '../../export/export-stream.js';
import { NDJSON_TYPE } from '../../export/format.js';
import { ImportReader, importOptions } from '../../export/import-reader.js';
import type { UpsertPlan } from '../../index/vector-index.js';
import type { Session } from '../../sessions/session.js';
import type { SessionStore } from '../../sessions/session-store.js';
import { prepareTextsAhead } from '../../sessions/texts-ahead.js';
import { requestError } from '../../schemas/request-error.js';
import { reserveBody } from '../body/index.js';
import type { BodyArrival } from '../body/arrival.js';
import { replyWithSession, stateOf, type RouteDeps } from '../context.js';

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

/** Feed the body to `reader` as it arrives; 413 once it passes `limit` bytes (announced or read). `arrival` holds its bytes as they come. */
async function readImport(ctx: Context, reader: ImportReader, limit: number, arrival?: BodyArrival): Promise<void> {
  const tooLarge = () => apiError('PAYLOAD_TOO_LARGE', `the import body is larger than ${limit} bytes (MAX_IMPORT_BYTES)`, { limit });
  if (Number(ctx.get('content-length') || 0) > limit) throw tooLarge();
  let bytes = 0;
  try {
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > limit) throw tooLarge();
      arrival?.received(chunk.length);
      reader.push(chunk);
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

export function transferRoutes({ router, store, schemas, config, auth, importSlots }: RouteDeps): void {
  const { writes } = store;

  router.get('/vectors/export', auth, (ctx) => {
    const query = v.safeParse(schemas.ExportQuerySchema, { ...ctx.query });
    if (!query.success) throw requestError(query.issues, 'query');
    const { session, timings } = stateOf(ctx);
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
    const reader = new ImportReader(schemas);
    const start = performance.now();
    const reservation = reserveBody(ctx, store.budget, config.maxImportBytes);
    let parsed: ReturnType<ImportReader['finish']>;
    try {
      await readImport(ctx, reader, config.maxImportBytes, reservation);
      parsed = reader.finish();
    } finally {
      reservation?.release();
    }
    // Its texts analysed in slices now, so its write turn does not hold the event loop for that too.
    parsed.preparedTexts = await prepareTextsAhead(session.index, parsed.records, importOptions(parsed));
    timings.set('importReadMs', Math.round((performance.now() - start) * 1000) / 1000);
    // Checked in a write turn, its log records encoded in slices outside any turn, then checked again and applied in one turn.
    let plan = await writes.inTurn(session, () => timings.measure('capacityCheckMs', () => writes.prepareImport(session, parsed)));
    const encodeStart = performance.now();
    const encoded = plan ? await store.encodeImport(plan) : undefined;
    timings.set('importEncodeMs', Math.round((performance.now() - encodeStart) * 1000) / 1000);
    const mutation = await writes.inTurn(session, () =>
      timings.measure('importMs', () => {
        // Other changes may have come in meanwhile: the whole plan again when this session changed
        // (its log records are then written anew if it differs), else the memory checks.
        if (plan && !session.index.isCurrent(plan)) plan = writes.prepareImport(session, parsed);
        else if (plan) recheckMemory(store, session, plan);
        return plan ? writes.importPlan(session, plan, encoded) : { added: 0, replaced: 0 };
      }),
    );
    replyWithSession(ctx, store, { mutation });
  });
}
