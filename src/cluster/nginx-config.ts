// The nginx configuration in front of tempvec instances, generated from the
// instance list. A token names its instance (`<id>.<secret>`, INSTANCE_ID), so
// a `map` on the Authorization header picks the instance's upstream; requests
// without such a token (POST /token, /limits, the SDK, the kernel, the demo,
// garbage tokens, unknown prefixes) go to any instance, which answers them as
// it would directly. Errors nginx makes itself keep the service's JSON shape.
// nginx carries the instances' protections in front of them: bodies streamed
// (never spooled to disk before a token is checked), the same client timeouts,
// connections and requests per address capped, and /healthz, /readyz and
// /metrics on an internal listener only (docs/cluster.md).
import { MODEL_FILES_PREFIX } from '../embedding/model-files.js';
import { INSTANCE_ID_PATTERN, type Config } from '../config.js';

export interface Upstream {
  id: string;
  host: string;
  port: number;
}

export interface ProxyOptions {
  /** Where nginx listens: "8080", "127.0.0.1:8080", "[::]:80". */
  listen: string;
  upstreams: readonly Upstream[];
  /** MAX_BODY_BYTES of the instances: nginx refuses a larger body with the same PAYLOAD_TOO_LARGE body. */
  maxBodyBytes: number;
  /** MAX_IMPORT_BYTES of the instances: the same for POST /vectors/import, whose body may be larger. */
  maxImportBytes: number;
  /** Idle keep-alive connections nginx keeps to each instance. */
  keepalive?: number;
  /** Where /healthz, /readyz and /metrics answer (any instance's, or /<id>/metrics for one): an address only operators reach. */
  internalListen: string;
  timeouts: ClientTimeouts;
  perAddress: PerAddressLimits;
}

/** The instances' client timeouts (HEADERS_TIMEOUT_MS and the fixed ones in /limits `admission`), applied by nginx first. */
export interface ClientTimeouts {
  headersMs: number;
  /** Longest silence within a body (nginx's client_body_timeout is between two reads): the instances' grace before a body's rate is checked. */
  bodyIdleMs: number;
  keepAliveMs: number;
}

/** Per client address ($binary_remote_addr); 0 turns a limit off. */
export interface PerAddressLimits {
  connections: number;
  requestsPerSec: number;
}

/** Bytes of each shared zone of per-address state: 10 MiB keeps about 80,000 addresses (limit_req's state is the larger). */
const ZONE_SIZE = '10m';

/** The defaults of the cluster's protections, from the instances' configuration (docs/cluster.md, "Protections"). */
export function clusterLimits(config: Config): { timeouts: ClientTimeouts; perAddress: PerAddressLimits } {
  return {
    timeouts: { headersMs: config.headersTimeoutMs, bodyIdleMs: config.bodyGraceMs, keepAliveMs: config.idleTimeoutMs },
    perAddress: {
      // One address may hold a hundredth of what one instance accepts.
      connections: Math.ceil(config.maxConnections / 100),
      // Two tokens at their full rate each (REQUEST_RATE_PER_SEC); 0 there turns this off too.
      requestsPerSec: config.requestRatePerSec * 2,
    },
  };
}

export interface ServerOptions extends ProxyOptions {
  /** The prefix nginx runs from (-p): pid file, logs and temporary files go there, so it runs unprivileged. */
  prefix: string;
  workerProcesses?: number;
}

/** Unauthenticated routes, served by any instance (with or without a token in the request). */
export const ANY_INSTANCE_PATHS = [
  '/',
  '/token',
  '/limits',
  '/openapi.json',
  '/sdk.js',
  '/sdk.d.ts',
  '/kernel.wasm',
  '/kernel.simd128.wasm',
  '/demo/passages.json',
];

/** Operators' routes: on the internal listener only; the public one answers them 404. */
export const INTERNAL_PATHS = ['/healthz', '/readyz', '/metrics'];

/** `requestLatencyMs` of an answer nginx makes itself: $request_time is seconds ("0.002"), and "0.002e3" is JSON for 2. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: ${request_time} is nginx's variable, for nginx to fill in.
const LATENCY = '"metrics":{"requestLatencyMs":${request_time}e3}';

function errorBody(code: string, message: string): string {
  return `{"success":false,"error":{"code":"${code}","message":"${message}"},${LATENCY}}`;
}

/** `id=host:port,...` (the --upstreams argument). */
export function parseUpstreams(text: string): Upstream[] {
  const upstreams = text
    .split(',')
    .filter(Boolean)
    .map((entry) => {
      const match = /^([^=]+)=(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry.trim());
      if (!match) throw new Error(`--upstreams: "${entry}" is not id=host:port`);
      const [, id, host, port] = match;
      if (!INSTANCE_ID_PATTERN.test(id)) throw new Error(`--upstreams: instance id "${id}" is not 1 to 16 lowercase letters or digits`);
      if (Number(port) < 1 || Number(port) > 65535) throw new Error(`--upstreams: port ${port} is out of range`);
      return { id, host, port: Number(port) };
    });
  checkUpstreams(upstreams);
  return upstreams;
}

function checkUpstreams(upstreams: readonly Upstream[]): void {
  if (upstreams.length === 0) throw new Error('no instances');
  const ids = new Set<string>();
  for (const { id } of upstreams) {
    if (!INSTANCE_ID_PATTERN.test(id)) throw new Error(`instance id "${id}" is not 1 to 16 lowercase letters or digits`);
    if (ids.has(id)) throw new Error(`instance id "${id}" appears twice`);
    ids.add(id);
  }
}

/**
 * The http-context part: upstreams, the token map and the server. An operator
 * who runs nginx themselves includes it in their http block (conf.d).
 */
export function proxyConfig(options: ProxyOptions): string {
  const { listen, upstreams, maxBodyBytes, maxImportBytes, keepalive = 64, timeouts, perAddress } = options;
  checkUpstreams(upstreams);
  // A location with an error_page of its own inherits none of the server's: each one lists them all.
  const errorPages = (tooLarge: string) => [
    'error_page 502 504 = @instance_unavailable;',
    `error_page 413 = ${tooLarge};`,
    'error_page 400 = @bad_request;',
    'error_page 494 = @headers_too_large;',
    'error_page 500 = @internal_error;',
    'error_page 429 = @rate_limited;',
  ];
  const seconds = (ms: number) => `${Math.max(1, Math.ceil(ms / 1000))}s`;
  const address = ({ host, port }: Upstream) => `${host}:${port}`;
  const lines = [
    '# Generated by tempvec (src/cluster/nginx-config.ts) from the instance list; regenerate, do not edit.',
    ...upstreams.flatMap((u) => [
      // One server per upstream: nginx never marks it failed, every request of its sessions is tried.
      `upstream tempvec_${u.id} {`,
      `  server ${address(u)};`,
      `  keepalive ${keepalive};`,
      '}',
    ]),
    'upstream tempvec_any {',
    // A failed instance is skipped for fail_timeout; the next one gets the request.
    ...upstreams.map((u) => `  server ${address(u)} max_fails=1 fail_timeout=2s;`),
    `  keepalive ${keepalive};`,
    '}',
    '',
    "# The token's instance prefix picks the upstream; anything else goes to any instance,",
    '# which answers an unknown prefix or a garbage token as an unknown token (401 INVALID_TOKEN).',
    'map $http_authorization $tempvec_upstream {',
    '  default tempvec_any;',
    ...upstreams.map((u) => `  "~^[Bb][Ee][Aa][Rr][Ee][Rr] ${u.id}\\." tempvec_${u.id};`),
    '}',
    '',
    '# Per client address: connections and requests (a full zone refuses new addresses too).',
    `limit_conn_zone $binary_remote_addr zone=tempvec_conn:${ZONE_SIZE};`,
    ...(perAddress.requestsPerSec > 0 ? [`limit_req_zone $binary_remote_addr zone=tempvec_req:${ZONE_SIZE} rate=${perAddress.requestsPerSec}r/s;`] : []),
    '',
    'server {',
    `  listen ${listen};`,
    '  server_tokens off;',
    `  client_max_body_size ${maxBodyBytes};`,
    // Bodies go to the instance as they arrive: none waits in a temporary file before its token is checked.
    '  proxy_request_buffering off;',
    '  client_body_buffer_size 1m;',
    // The instances' timeouts: a slow client is cut here as it would be there.
    `  client_header_timeout ${seconds(timeouts.headersMs)};`,
    `  client_body_timeout ${seconds(timeouts.bodyIdleMs)};`,
    `  keepalive_timeout ${seconds(timeouts.keepAliveMs)};`,
    ...(perAddress.connections > 0 ? [`  limit_conn tempvec_conn ${perAddress.connections};`] : []),
    ...(perAddress.requestsPerSec > 0 ? [`  limit_req zone=tempvec_req burst=${perAddress.requestsPerSec * 2} nodelay;`] : []),
    '  limit_conn_status 429;',
    '  limit_req_status 429;',
    // Node's parser takes 16 KiB of headers: a line up to that passes, as it would directly.
    '  large_client_header_buffers 4 16k;',
    '  proxy_http_version 1.1;',
    '  proxy_set_header Connection "";',
    '  proxy_set_header Host $http_host;',
    // Overwritten, not appended: an instance started with TRUST_PROXY=1 takes the client address from it.
    '  proxy_set_header X-Forwarded-For $remote_addr;',
    '  proxy_connect_timeout 2s;',
    '  proxy_read_timeout 120s;',
    '  proxy_send_timeout 120s;',
    '  proxy_buffering off;',
    '',
    "  # Errors nginx makes itself answer in the service's JSON shape, never its HTML pages.",
    ...errorPages('@payload_too_large').map((line) => `  ${line}`),
    '',
    '  location @instance_unavailable {',
    '    default_type application/json;',
    '    add_header Retry-After 2 always;',
    '    add_header Cache-Control no-store always;',
    `    return 503 '${errorBody('INSTANCE_UNAVAILABLE', 'the instance that holds this session is not answering (down or restarting); other sessions are not affected, try again shortly')}';`,
    '  }',
    '  location @payload_too_large {',
    '    default_type application/json;',
    `    return 413 '${errorBody('PAYLOAD_TOO_LARGE', `the request body is larger than the limit (${maxBodyBytes} bytes)`)}';`,
    '  }',
    '  location @import_too_large {',
    '    default_type application/json;',
    `    return 413 '${errorBody('PAYLOAD_TOO_LARGE', `the import body is larger than ${maxImportBytes} bytes (MAX_IMPORT_BYTES)`)}';`,
    '  }',
    '  location @rate_limited {',
    '    default_type application/json;',
    '    add_header Retry-After 1 always;',
    `    return 429 '${errorBody('RATE_LIMITED', 'too many connections or requests from this address; try again shortly')}';`,
    '  }',
    '  location @internal_error {',
    '    default_type application/json;',
    `    return 500 '${errorBody('INTERNAL_ERROR', 'internal error in the proxy')}';`,
    '  }',
    // As Node answers headers over its limit: 431, no body, connection closed.
    '  location @headers_too_large { return 431; }',
    '  location @bad_request {',
    '    default_type application/json;',
    `    return 400 '${errorBody('VALIDATION_ERROR', 'the request could not be read (malformed or headers too large)')}';`,
    '  }',
    '',
    '  # Unauthenticated routes: any instance; one that fails or is restoring (503) is skipped.',
    ...ANY_INSTANCE_PATHS.map((path) => `  location = ${path} { ${ANY_PASS} }`),
    // The embedding model's files (every instance has the same, at the same hashed URLs).
    `  location ^~ ${MODEL_FILES_PREFIX}/ { ${ANY_PASS} }`,
    '',
    "  # Operators' routes answer on the internal listener only.",
    ...INTERNAL_PATHS.map((path) => `  location = ${path} { default_type application/json; return 404 '${notFound(path)}'; }`),
    '',
    "  # An import may be larger than other bodies (MAX_IMPORT_BYTES); it goes to its session's instance.",
    '  location = /vectors/import {',
    `    client_max_body_size ${maxImportBytes};`,
    ...errorPages('@import_too_large').map((line) => `    ${line}`),
    '    proxy_pass http://$tempvec_upstream;',
    '    proxy_next_upstream off;',
    '  }',
    '',
    '  location / {',
    '    proxy_pass http://$tempvec_upstream;',
    '    proxy_next_upstream off;',
    '  }',
    '}',
    '',
    ...internalServer(options),
  ];
  return lines.join('\n') + '\n';
}

/** Any instance; one that fails or is restoring (503) is skipped. */
const ANY_PASS = 'proxy_pass http://tempvec_any; proxy_next_upstream error timeout http_502 http_503 non_idempotent;';

function notFound(path: string): string {
  return errorBody('NOT_FOUND', `no route GET ${path} here: it answers on the internal listener only (docs/cluster.md)`);
}

/** /healthz, /readyz and /metrics of any instance, and /<id>/<route> of instance <id>, for operators only. */
function internalServer({ internalListen, upstreams }: ProxyOptions): string[] {
  return [
    '# Operators only: health, readiness and Prometheus metrics.',
    'server {',
    `  listen ${internalListen};`,
    '  server_tokens off;',
    '  proxy_http_version 1.1;',
    '  proxy_set_header Connection "";',
    '  proxy_connect_timeout 2s;',
    ...INTERNAL_PATHS.map((path) => `  location = ${path} { ${ANY_PASS} }`),
    ...upstreams.flatMap((u) => INTERNAL_PATHS.map((path) => `  location = /${u.id}${path} { proxy_pass http://tempvec_${u.id}${path}; }`)),
    `  location / { default_type application/json; return 404 '${errorBody('NOT_FOUND', 'no such route on the internal listener')}'; }`,
    '}',
  ];
}

/** A whole nginx.conf for `nginx -p prefix -c file`, in the foreground, unprivileged. */
export function serverConfig(options: ServerOptions): string {
  const { prefix, workerProcesses = 1 } = options;
  const indent = (text: string) =>
    text
      .split('\n')
      .map((line) => (line ? `  ${line}` : line))
      .join('\n');
  return [
    'daemon off;',
    `worker_processes ${workerProcesses};`,
    `pid ${prefix}/nginx.pid;`,
    `error_log ${prefix}/error.log warn;`,
    'events { worker_connections 4096; }',
    'http {',
    '  access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((what) => `  ${what}_temp_path ${prefix}/${what}_temp;`),
    indent(proxyConfig(options)),
    '}',
    '',
  ].join('\n');
}
