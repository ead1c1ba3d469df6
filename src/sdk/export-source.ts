// The sources LocalIndex.importFrom and TempvecClient.importVectors read an
// export from, as one stream of byte chunks.
import { TempvecError } from './errors.js';

/** What an import reads: a fetch Response, text, bytes, or a stream of bytes. */
export type ExportSource = Response | string | Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export async function* chunksOf(source: ExportSource): AsyncIterable<Uint8Array> {
  if (typeof source === 'string') {
    yield new TextEncoder().encode(source);
  } else if (source instanceof Uint8Array) {
    yield source;
  } else if (typeof Response !== 'undefined' && source instanceof Response) {
    if (!source.ok) throw new TempvecError(source.status, 'HTTP_ERROR', `the export answered HTTP ${source.status}`);
    if (source.body) yield* readStream(source.body);
  } else if (typeof (source as ReadableStream).getReader === 'function') {
    yield* readStream(source as ReadableStream<Uint8Array>);
  } else {
    yield* source as AsyncIterable<Uint8Array>;
  }
}

async function* readStream(stream: ReadableStream<Uint8Array>): AsyncIterable<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (let part = await reader.read(); !part.done; part = await reader.read()) yield part.value;
  } finally {
    reader.releaseLock();
  }
}
