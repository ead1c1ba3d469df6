// bench:embed's worker thread: its own TextEmbedder (tokenizer and kernel
// instance); embeds each message's texts and answers how many it embedded.
import { parentPort } from 'node:worker_threads';
import { loadTextEmbedder } from '../../src/embedding/load-node.js';

const embedder = loadTextEmbedder();
parentPort!.on('message', (texts: string[]) => {
  parentPort!.postMessage(embedder.embed(texts).length / embedder.dimension);
});
parentPort!.postMessage('ready');
