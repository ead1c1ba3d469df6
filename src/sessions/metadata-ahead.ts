// An upsert's metadata measured before its write turn, a slice at a time:
// its JSON text and the filter-index entries it lists (pure, the same
// for any index), which prepareUpsert would otherwise make for the whole
// batch in one piece inside the turn (1,000 objects of 8 KB: tens of
// milliseconds). The turn takes them as they are (options.preparedMetadata).
// An import's lines are measured as they are read (export/import-reader.ts).
import type { PreparedMetadata, VectorInput } from '../index/types.js';
import type { SessionWork } from './session.js';
import { REQUEST_SLICE_MS, Slices } from '../limits/slices.js';

/** The records' metadata measured (the session index's measureMetadata); undefined when none has any. */
export async function prepareMetadataAhead(session: SessionWork, records: readonly VectorInput[]): Promise<PreparedMetadata | undefined> {
  const { index } = session;
  if (!records.some((record) => record.metadata !== undefined)) return undefined;
  const prepared: PreparedMetadata = { json: new Array(records.length), counts: new Array(records.length) };
  const slices = new Slices(REQUEST_SLICE_MS, { waitBehind: true, owner: session.tokenHash });
  for (let i = 0; i < records.length; i++) {
    const { json, count } = index.measureMetadata(records[i].metadata);
    prepared.json[i] = json;
    prepared.counts[i] = count;
    await slices.pause();
  }
  return prepared;
}
