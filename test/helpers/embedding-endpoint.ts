// A real HTTP server on 127.0.0.1 speaking OpenAI's /v1/embeddings protocol,
// for the tests of an endpoint as the server's model: each request's body and
// Authorization header are recorded, and `behave` answers it (a good answer
// by default, its data reversed so `index` decides the order).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  body: { model: string; input: string[] };
  authorization?: string;
}

/** Answers the n-th request (from 1). */
export type Behaviour = (seen: SeenRequest, res: ServerResponse, n: number) => void;

/** The fake model's vector of a text (4 floats, from its characters, not unit length). */
export function rawVector(text: string): number[] {
  const v = [text.length, 1, 0, 0];
  for (let i = 0; i < text.length; i++) v[(i % 3) + 1] += text.charCodeAt(i) / 100;
  return v;
}

/** `v` scaled to unit length, rounded to float32 as the server stores it. */
export const unit = (v: number[]) => {
  const norm = Math.hypot(...v);
  return v.map((x) => Math.fround(x / norm));
};

export const goodAnswer: Behaviour = (seen, res) => {
  const data = seen.body.input.map((text, index) => ({ object: 'embedding', index, embedding: rawVector(text) })).reverse();
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: seen.body.model }));
};

export interface EmbeddingEndpoint {
  /** Its /v1/embeddings URL (set once started). */
  url: string;
  behave: Behaviour;
  seen: SeenRequest[];
}

/** Start the endpoint before the suite's tests (register it before useServer), reset it before each, stop it after. */
export function useEmbeddingEndpoint(): EmbeddingEndpoint {
  const endpoint: EmbeddingEndpoint = { url: '', behave: goodAnswer, seen: [] };
  let server: Server;
  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let text = '';
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => {
        const entry = { body: JSON.parse(text), authorization: req.headers.authorization };
        endpoint.seen.push(entry);
        endpoint.behave(entry, res, endpoint.seen.length);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/embeddings`;
  });
  beforeEach(() => {
    endpoint.behave = goodAnswer;
    endpoint.seen = [];
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return endpoint;
}
