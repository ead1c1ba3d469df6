// A tempvec cluster (src/cluster/launcher.ts: instances from dist/server.js,
// nginx from Debian) for the tests of one file, and requests through it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, DIST_SERVER, findNginx } from '../../src/cluster/launcher.js';
import type { PerAddressLimits } from '../../src/cluster/nginx-config.js';
import { loadConfig } from '../../src/config.js';
import { requestAt, type ApiResponse, type RequestOptions } from './http.js';

export interface TestCluster {
  cluster: Cluster;
  dataDir: string;
  log: string[];
  request(method: string, path: string, options?: RequestOptions): Promise<ApiResponse>;
  /** A GET on nginx's internal listener (/healthz, /readyz, /metrics, /<id>/metrics). */
  internal(path: string): Promise<ApiResponse>;
  /** POST /token through nginx; returns the token. */
  token(): Promise<string>;
  close(): Promise<void>;
}

/** Per-address limits off unless a test asks: every test request comes from 127.0.0.1, standing for many clients. */
const UNLIMITED: PerAddressLimits = { connections: 0, requestsPerSec: 0 };

export async function startCluster(
  instances: number,
  env: Record<string, string> = {},
  respawnMs = 0,
  perAddress: PerAddressLimits = UNLIMITED,
): Promise<TestCluster> {
  const nginx = findNginx();
  if (!nginx) throw new Error("nginx is not installed: apt-get install nginx (npm test's pretest does)");
  const dataDir = mkdtempSync(join(tmpdir(), 'tempvec-cluster-'));
  const log: string[] = [];
  const fullEnv: Record<string, string | undefined> = { ...process.env, TOKEN_RATE_PER_MIN: '0', MAX_SESSIONS_PER_ADDRESS: '0', ...env };
  // The body limits the instances will read from this environment, for nginx.
  const config = loadConfig({ MAX_BODY_BYTES: fullEnv.MAX_BODY_BYTES, MAX_IMPORT_BYTES: fullEnv.MAX_IMPORT_BYTES });
  const cluster = new Cluster({
    instances,
    port: 0,
    host: '127.0.0.1',
    dataDir,
    maxBodyBytes: config.maxBodyBytes,
    maxImportBytes: config.maxImportBytes,
    env: fullEnv,
    nginx,
    server: DIST_SERVER,
    respawnMs,
    workerProcesses: 1,
    perAddress,
    log: (line) => log.push(line),
  });
  await cluster.start();
  const request = (method: string, path: string, options: RequestOptions = {}) => requestAt(cluster.url, method, path, { timeoutMs: 15_000, ...options });
  return {
    cluster,
    dataDir,
    log,
    request,
    internal: (path) => requestAt(cluster.internalUrl, 'GET', path, { timeoutMs: 15_000 }),
    async token() {
      const res = await request('POST', '/token');
      if (res.status !== 201) throw new Error(`POST /token answered ${res.status}: ${res.text}`);
      return res.body.token as string;
    },
    async close() {
      await cluster.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
