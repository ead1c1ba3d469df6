// An embedding thread: loads the shipped model from files (load-node.ts:
// never from the network) and embeds the texts of each job it is sent.
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { loadTextEmbedder } from './load-node.js';

/** What the pool sends: a job's texts. */
export interface EmbedJobMessage {
  texts: string[];
}

/** What a thread answers: once `ready` with its encoder's memory, then per job its vectors (back to back) or the error. */
export type EmbedWorkerMessage = { ready: true; memoryBytes: number } | { vectors: Float32Array } | { error: string };

/**
 * Nicer than the kernel threads (5): embedding is bulk work, so when it and
 * a search or the event loop want the same core, they win.
 */
const EMBEDDING_THREAD_NICE = 10;

try {
  setPriority(0, EMBEDDING_THREAD_NICE);
} catch {
  // Not allowed here (another OS, a sandbox): the thread runs at normal priority.
}

const embedder = loadTextEmbedder();
const port = parentPort!;

port.on('message', ({ texts }: EmbedJobMessage) => {
  let answer: EmbedWorkerMessage;
  try {
    answer = { vectors: embedder.embed(texts) };
  } catch (err) {
    answer = { error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(answer, 'vectors' in answer ? [answer.vectors.buffer as ArrayBuffer] : []);
});

port.postMessage({ ready: true, memoryBytes: embedder.encoder.memoryBytes } satisfies EmbedWorkerMessage);
