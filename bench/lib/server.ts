// The service in this process on an ephemeral port, for the HTTP benches.
// Rate limits are off (they would cap the very rates we measure) and the
// memory budget is left to the bench; everything else is the default config.
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from '../../src/config.js';
import { createApp } from '../../src/http/app.js';

export interface BenchServer {
  base: string;
  app: ReturnType<typeof createApp>['app'];
  close(): Promise<void>;
  /** POST a JSON body (a Buffer is sent as is, so the client does not re-encode it each time). */
  post(path: string, body: string | Buffer, token?: string): Promise<any>;
  token(): Promise<string>;
}

export async function startServer(overrides: Partial<Config> = {}, extend?: (app: BenchServer['app']) => void): Promise<BenchServer> {
  const created = createApp({ config: loadConfig({}, { requestRatePerSec: 0, tokenRatePerMin: 0, maxSessionsPerAddress: 0, ...overrides }) });
  extend?.(created.app);
  const server = created.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const post = (path: string, body: string | Buffer, token?: string) =>
    new Promise<any>((resolve, reject) => {
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': bytes.length };
      if (token) headers.authorization = `Bearer ${token}`;
      const req = request(base + path, { method: 'POST', headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          if ((res.statusCode ?? 500) >= 400) reject(new Error(`${path}: ${res.statusCode} ${JSON.stringify(json).slice(0, 300)}`));
          else resolve(json);
        });
      });
      req.on('error', reject);
      req.end(bytes);
    });
  return {
    base,
    app: created.app,
    post,
    token: async () => (await post('/token', '')).token,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
