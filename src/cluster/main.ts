// npm run cluster -- --instances 3 --port 8080
//   K tempvec instances on this machine behind nginx on one port; Ctrl-C or
//   SIGTERM drains them all. DATA_DIR=dir keeps instance <id>'s sessions in dir/<id>.
// npm run cluster -- --upstreams a=10.0.0.1:3000,b=10.0.0.2:3000 --port 80 [--out file]
//   writes the nginx configuration (an http-block include) for instances
//   elsewhere, each started with INSTANCE_ID=<id>, and exits.
import { existsSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { Cluster, DIST_SERVER, findNginx } from './launcher.js';
import { clusterLimits, parseUpstreams, proxyConfig, type PerAddressLimits } from './nginx-config.js';

const USAGE = `usage: npm run cluster -- [--instances K] [--port P] [--host ADDR] [--internal-port P] [--nginx PATH] [--nginx-workers N] [--respawn-ms MS]
                          [--connections-per-address N] [--requests-per-sec-per-address N]
       npm run cluster -- --upstreams id=host:port,... [--port P] [--host ADDR] [--internal-port P] [--out FILE] [same per-address options]
--internal-port: /healthz, /readyz and /metrics answer on 127.0.0.1 there only (default P+1); the per-address
limits default to a hundredth of MAX_CONNECTIONS and twice REQUEST_RATE_PER_SEC (0 turns one off).`;

function fail(message: string): never {
  console.error(`tempvec cluster: ${message}`);
  process.exit(1);
}

function count(value: string, name: string, min: number): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) fail(`--${name} must be an integer >= ${min}, got "${value}"\n${USAGE}`);
  return n;
}

/** The command line's options; a bad one stops with the usage. */
function cliArgs() {
  try {
    return parseArgs({
      options: {
        instances: { type: 'string', default: '2' },
        port: { type: 'string', default: '8080' },
        host: { type: 'string', default: '127.0.0.1' },
        upstreams: { type: 'string' },
        out: { type: 'string' },
        'nginx-workers': { type: 'string', default: '1' },
        nginx: { type: 'string' },
        'respawn-ms': { type: 'string', default: '1000' },
        'internal-port': { type: 'string' },
        'connections-per-address': { type: 'string' },
        'requests-per-sec-per-address': { type: 'string' },
        help: { type: 'boolean' },
      },
    }).values;
  } catch (err) {
    fail(`${(err as Error).message}\n${USAGE}`);
  }
}

/** The environment's configuration; a bad one stops with its message. */
function configOrFail(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }
}

async function main(): Promise<void> {
  const args = cliArgs();
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const config = configOrFail();
  const port = count(args.port, 'port', 0);
  const listen = `${args.host.includes(':') ? `[${args.host}]` : args.host}:${port}`;
  const internalPort = args['internal-port'] === undefined ? (port ? port + 1 : 0) : count(args['internal-port'], 'internal-port', 0);
  const perAddress: Partial<PerAddressLimits> = {};
  if (args['connections-per-address'] !== undefined) perAddress.connections = count(args['connections-per-address'], 'connections-per-address', 0);
  if (args['requests-per-sec-per-address'] !== undefined)
    perAddress.requestsPerSec = count(args['requests-per-sec-per-address'], 'requests-per-sec-per-address', 0);

  if (args.upstreams !== undefined) {
    let text: string;
    try {
      const limits = clusterLimits(config);
      text = proxyConfig({
        listen,
        upstreams: parseUpstreams(args.upstreams),
        maxBodyBytes: config.maxBodyBytes,
        maxImportBytes: config.maxImportBytes,
        internalListen: `127.0.0.1:${internalPort || 8081}`,
        timeouts: limits.timeouts,
        perAddress: { ...limits.perAddress, ...perAddress },
      });
    } catch (err) {
      fail((err as Error).message);
    }
    if (args.out) {
      writeFileSync(args.out, text);
      console.log(`wrote ${args.out}: include it in nginx's http block; start each instance with its INSTANCE_ID (and TRUST_PROXY=1)`);
    } else process.stdout.write(text);
    return;
  }

  const nginx = args.nginx ?? findNginx();
  if (!nginx || !existsSync(nginx)) fail(`nginx is not installed${args.nginx ? ` at ${args.nginx}` : ''}; install it with: apt-get install nginx`);
  const cluster = new Cluster({
    instances: count(args.instances, 'instances', 1),
    port,
    host: args.host,
    dataDir: config.dataDir,
    maxBodyBytes: config.maxBodyBytes,
    maxImportBytes: config.maxImportBytes,
    env: process.env,
    nginx,
    server: DIST_SERVER,
    respawnMs: count(args['respawn-ms'], 'respawn-ms', 0),
    workerProcesses: count(args['nginx-workers'], 'nginx-workers', 1),
    internalPort,
    perAddress,
    log: (line) => console.log(line),
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: draining the instances and stopping nginx`);
    cluster.stop().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  try {
    await cluster.start();
  } catch (err) {
    fail((err as Error).message);
  }
  console.log(`tempvec cluster listening on ${cluster.url} (nginx in ${cluster.nginxPrefix}); /healthz, /readyz, /metrics on ${cluster.internalUrl}`);
  for (const { id, url } of cluster.instances) console.log(`  instance ${id}: ${url}${config.dataDir ? ` (DATA_DIR ${config.dataDir}/${id})` : ''}`);
  cluster.nginxExited?.then((code) => {
    if (stopping) return;
    console.error(`nginx exited (${code}); stopping the instances`);
    stopping = true;
    cluster.stop().finally(() => process.exit(1));
  });
}

main().catch((err) => fail(String(err?.stack ?? err)));
