// Texts embedded before a write's or a search's turn: a record with text and
// no vector gets the embedding of its text, a query {"text": ...} the
// embedding of its text, on the embedding threads while the session's turn is
// free for others. The session's model is checked first (nothing is embedded
// for a request the turn would refuse), and again in the turn: a reset or
// another request may change it meanwhile (config-lock.ts).
import { pointer } from '../errors.js';
import type { Embedder } from '../embedding/embedder.js';
import { lockEmbedding, noEmbeddingModel } from '../index/config-lock.js';
import type { UpsertOptions, VectorInput } from '../index/types.js';
import { apiError } from '../errors.js';
import type { Session } from './session.js';

/**
 * The records with each one without a vector given the embedding of its
 * text, and the options saying which model embedded them; the records as
 * they are when every one has a vector. The texts go to the embedder
 * `chunk` at a time (an import's may be more than a token may have in flight).
 */
export async function embedRecordsAhead(
  embedder: Embedder,
  session: Session,
  records: VectorInput[],
  options: UpsertOptions,
  chunk = Infinity,
): Promise<{ records: VectorInput[]; options: UpsertOptions }> {
  const at: number[] = [];
  for (let i = 0; i < records.length; i++) if (records[i].vector === undefined) at.push(i);
  if (at.length === 0) return { records, options };
  const pathOf = options.pathOf ?? ((i: number) => pointer('vectors', i));
  const texts = at.map((i) => {
    const { text } = records[i];
    if (text === undefined || text === '') throw textMissing(pathOf(i));
    return text;
  });
  const embedded: UpsertOptions = { ...options, embeddedWith: embedder.model };
  lockEmbedding(session.index.getConfig(), embedded);
  const vectors: Float32Array[] = [];
  for (let from = 0; from < texts.length; from += chunk) vectors.push(...(await embedder.embed(texts.slice(from, from + chunk), session.tokenHash)));
  const out = [...records];
  at.forEach((i, k) => {
    out[i] = { ...records[i], vector: vectors[k] };
  });
  return { records: out, options: embedded };
}

/** The embeddings of a search's query texts under the session's model; 400 NO_EMBEDDING_MODEL in a session without it. */
export async function embedQueriesAhead(embedder: Embedder, session: Session, texts: string[]): Promise<Float32Array[]> {
  assertSearchableByText(embedder, session);
  const vectors = await embedder.embed(texts, session.tokenHash);
  // A reset while the texts were embedded: the turn would search another session's vectors with them.
  assertSearchableByText(embedder, session);
  return vectors;
}

function assertSearchableByText(embedder: Embedder, session: Session): void {
  const config = session.index.getConfig();
  if (config.embedding !== embedder.model) throw noEmbeddingModel(config, 'be searched by text');
}

/** 400: a record with neither a vector nor a text to embed. */
function textMissing(path: string) {
  return apiError('VALIDATION_ERROR', `invalid request body: ${path}: a record needs a vector, or a text to embed`, {
    issues: [{ path: path + '/vector', message: 'a record needs a vector, or a text to embed' }],
  });
}
