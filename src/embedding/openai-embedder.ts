// An OpenAI-compatible embeddings endpoint as the server's model (Ollama,
// vLLM, TEI, OpenAI: POST {model, input} -> {data: [{embedding, index}]}).
// A call's texts go in batches of at most `batchTexts`, one batch at a time;
// each request is bounded by `timeoutMs` and retried with backoff on 429, 5xx
// and network errors, `attempts` tries in all. Answers are checked (count,
// indexes, dimensions, finite numbers) and normalised to unit length. The
// upstream's failures become 502 EMBEDDING_UPSTREAM_ERROR (a bad answer, a
// 4xx) or 503 EMBEDDING_UNAVAILABLE with Retry-After (timeouts, unreachable,
// 5xx or 429 after the retries). The API key goes in the Authorization
// header only: no message, detail or log line carries it.
import { apiError } from '../errors.js';
import type { Embedder } from './embedder.js';
import { TextsInFlight, type TextsInFlightLimits } from './texts-in-flight.js';

export interface OpenAiEmbedderOptions extends TextsInFlightLimits {
  /** The endpoint: its /v1/embeddings URL. */
  url: string;
  /** The model's name, sent upstream and reported by the API. */
  model: string;
  apiKey?: string;
  /** Floats per vector the model answers (answers of another length are refused). */
  dimensions: number;
  /** One request's time at most, answer included. */
  timeoutMs: number;
  /** Tries of one batch in all (1: no retry). */
  attempts: number;
  /** Texts per request upstream. */
  batchTexts: number;
  /** The first retry's wait; each next one doubles it (tests shorten it). */
  backoffMs?: number;
}

/** The first retry's wait by default, doubled each retry. */
const BACKOFF_MS = 250;
/** A 429's Retry-After is honoured up to this long; a longer one ends the retries. */
const MAX_RETRY_AFTER_MS = 5000;
/** Bytes of an answer per float at most (JSON of a float32 in full: about 22), beside a fixed allowance. */
const ANSWER_BYTES_PER_FLOAT = 32;
const ANSWER_SLACK_BYTES = 64 * 1024;

/** An attempt's failure: whether another try may succeed, and how it is answered if none does. */
class UpstreamFailure extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export class OpenAiEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  private readonly inFlight: TextsInFlight;
  /** Requests sent upstream since the start, retries included, and batches that failed after their tries (metrics, tests). */
  requestsSent = 0;
  batchesFailed = 0;

  constructor(readonly options: OpenAiEmbedderOptions) {
    this.model = options.model;
    this.dimensions = options.dimensions;
    this.inFlight = new TextsInFlight(options);
  }

  get textsInFlight(): number {
    return this.inFlight.total;
  }

  async embed(texts: readonly string[], owner: string): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    this.inFlight.admit(texts.length, owner);
    try {
      const vectors: Float32Array[] = [];
      for (let at = 0; at < texts.length; at += this.options.batchTexts) vectors.push(...(await this.batch(texts.slice(at, at + this.options.batchTexts))));
      return vectors;
    } finally {
      this.inFlight.release(texts.length, owner);
    }
  }

  /** One batch, tried up to `attempts` times; its vectors, or the ApiError its last failure maps to. */
  private async batch(texts: string[]): Promise<Float32Array[]> {
    const { attempts, backoffMs = BACKOFF_MS } = this.options;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.request(texts);
      } catch (err) {
        const failure = err instanceof UpstreamFailure ? err : new UpstreamFailure(`the request failed (${(err as Error).message})`, true);
        const wait = failure.retryAfterMs ?? backoffMs * 2 ** (attempt - 1);
        if (!failure.retry || attempt >= attempts || wait > MAX_RETRY_AFTER_MS) {
          this.batchesFailed++;
          throw this.answer(failure, attempt);
        }
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  private async request(texts: string[]): Promise<Float32Array[]> {
    const { url, model, apiKey, timeoutMs } = this.options;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const signal = AbortSignal.timeout(timeoutMs);
    this.requestsSent++;
    let response: Response;
    try {
      response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ model, input: texts }), signal, redirect: 'error' });
    } catch (err) {
      throw new UpstreamFailure(signal.aborted ? `no answer within ${timeoutMs} ms` : `unreachable (${causeOf(err)})`, true);
    }
    const text = await this.readAnswer(response, texts.length, signal);
    if (response.status === 429) throw new UpstreamFailure('it answered 429 (rate limited)', true, 429, retryAfterMs(response.headers.get('retry-after')));
    if (response.status >= 500) throw new UpstreamFailure(`it answered HTTP ${response.status}`, true, response.status);
    if (!response.ok) throw new UpstreamFailure(`it answered HTTP ${response.status}: ${this.upstreamMessage(response.status, text)}`, false, response.status);
    return this.vectorsOf(text, texts.length);
  }

  /** The answer's body, bounded by what `count` vectors take (a larger one is a bad answer); a timeout while it arrives is one. */
  private async readAnswer(response: Response, count: number, signal: AbortSignal): Promise<string> {
    const limit = count * this.dimensions * ANSWER_BYTES_PER_FLOAT + ANSWER_SLACK_BYTES;
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = response.body?.getReader();
    try {
      for (let read = await reader?.read(); read && !read.done; read = await reader?.read()) {
        size += read.value.byteLength;
        if (size > limit) throw new UpstreamFailure(`its answer passed ${limit} bytes for ${count} vectors`, false);
        chunks.push(read.value);
      }
    } catch (err) {
      void reader?.cancel().catch(() => {});
      if (err instanceof UpstreamFailure) throw err;
      throw new UpstreamFailure(signal.aborted ? `no whole answer within ${this.options.timeoutMs} ms` : `its answer broke off (${causeOf(err)})`, true);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  /** The answer's vectors in the order of the texts, unit length; a bad answer throws. */
  private vectorsOf(text: string, count: number): Float32Array[] {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new UpstreamFailure('its answer is not JSON', false);
    }
    const data = (body as { data?: unknown } | null)?.data;
    if (!Array.isArray(data) || data.length !== count)
      throw new UpstreamFailure(`its answer has ${Array.isArray(data) ? data.length : 'no'} vectors for ${count} texts`, false);
    const vectors: (Float32Array | undefined)[] = new Array(count);
    data.forEach((item: { embedding?: unknown; index?: unknown } | null, i) => {
      const index = item?.index ?? i;
      if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= count || vectors[index as number])
        throw new UpstreamFailure(`its answer's data[${i}] has a bad or repeated index`, false);
      vectors[index as number] = this.unitVector(item?.embedding, i);
    });
    return vectors as Float32Array[];
  }

  private unitVector(embedding: unknown, i: number): Float32Array {
    if (!Array.isArray(embedding) || embedding.length !== this.dimensions)
      throw new UpstreamFailure(
        `its answer's data[${i}].embedding has ${Array.isArray(embedding) ? embedding.length : 'no'} numbers; the model's dimensions are ${this.dimensions}`,
        false,
      );
    let sum = 0;
    for (const x of embedding) {
      if (typeof x !== 'number' || !Number.isFinite(x))
        throw new UpstreamFailure(`its answer's data[${i}].embedding holds a value that is not a finite number`, false);
      sum += x * x;
    }
    const norm = Math.sqrt(sum);
    if (!(norm > 0) || !Number.isFinite(norm)) throw new UpstreamFailure(`its answer's data[${i}].embedding is a zero vector`, false);
    return Float32Array.from(embedding as number[], (x) => x / norm);
  }

  /**
   * The endpoint's own message of a 4xx, short, with the key cut out; none
   * for 401 and 403, whose messages may quote part of the key (OpenAI's does).
   */
  private upstreamMessage(status: number, text: string): string {
    if (status === 401 || status === 403) return 'it refused the key (EMBEDDING_API_KEY) or this client';
    const message = upstreamMessage(text);
    const { apiKey } = this.options;
    return apiKey ? message.split(apiKey).join('[EMBEDDING_API_KEY]') : message;
  }

  /** The ApiError a last failure is answered with: 502 for an answer that will not get better, 503 for one that may. */
  private answer(failure: UpstreamFailure, tries: number) {
    const where = `the embedding endpoint (model ${this.model})`;
    const details = { model: this.model, tries, ...(failure.status ? { upstreamStatus: failure.status } : {}) };
    if (!failure.retry) return apiError('EMBEDDING_UPSTREAM_ERROR', `${where} failed: ${failure.message}; nothing was embedded`, details);
    const retryAfter = Math.max(1, Math.ceil((failure.retryAfterMs ?? 1000) / 1000));
    return apiError(
      'EMBEDDING_UNAVAILABLE',
      `${where} failed after ${tries} ${tries === 1 ? 'try' : 'tries'}: ${failure.message}; nothing was embedded, try again later`,
      details,
      { 'Retry-After': String(retryAfter) },
    );
  }
}

/** Retry-After in ms (seconds or an HTTP date); undefined when absent or unreadable. */
function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  if (header.trim() !== '' && Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** The upstream's own error message, short (OpenAI: {error: {message}}); never our request's headers. */
function upstreamMessage(text: string): string {
  let message = text;
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const found = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message);
    if (typeof found === 'string') message = found;
  } catch {
    // Not JSON: its text as it is.
  }
  return message.length > 200 ? `${message.slice(0, 200)}…` : message || '(no body)';
}

/** A network error's cause, e.g. ECONNREFUSED (fetch wraps it as "fetch failed"). */
function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}
