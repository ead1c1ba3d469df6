// The generated tables of the docs, so they cannot drift from what the
// service does: README.md's configuration and error tables, from
// src/config.ts (CONFIG_VARIABLES) and src/errors.ts (ERROR_CODES), and
// docs/lifecycle.md's request path, from src/http/app.ts (REQUEST_PATH);
// docs/performance.md's figures (and performance-robustness.md's), from bench/results/
// (scripts/results-tables.ts).
// test/docs/readme.test.ts, lifecycle.test.ts and performance.test.ts fail when they differ.
//
//   npm run docs             rewrite the tables
//   npm run docs -- --check  exit 1 when a doc is out of date
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_VARIABLES, MACHINE_DEPENDENT_DEFAULTS } from '../src/config.js';
import { ERROR_CODES, type ErrorCode } from '../src/errors.js';
import { REQUEST_PATH } from '../src/http/app.js';
import { RESULTS_DOCS, resultsTables } from './results-tables.js';

export const README_PATH = fileURLToPath(new URL('../README.md', import.meta.url));
export const LIFECYCLE_PATH = fileURLToPath(new URL('../docs/lifecycle.md', import.meta.url));
export const API_PATH = fileURLToPath(new URL('../docs/api.md', import.meta.url));

/** When each error code is answered; every code must have a line (the README test enforces it). */
export const ERROR_CONDITIONS: Record<ErrorCode, string> = {
  UNAUTHORIZED: 'no `Authorization` header, or one that is not `Bearer <token>`',
  INVALID_TOKEN: 'a token this server did not issue (or one expired so long ago that it is forgotten)',
  SESSION_EXPIRED: "the token's session was idle for `SESSION_TTL_MS` and was deleted; request a new token",
  INVALID_JSON: 'the body is not JSON (or not UTF-8, or ends early)',
  UNSUPPORTED_MEDIA_TYPE: 'a body whose `content-type` is not `application/json`, or a compressed body',
  VALIDATION_ERROR:
    'a schema rule is broken: wrong type, out of range (`topK`, `candidatePool`, `dimensions`), unknown field, empty or too long id, metadata or filter not a plain object or too large/deep, non-finite number, a body that is not an object; `details.issues` lists `{ path, message }` of each problem; also a body sent to `POST /token`, `/index/reset` or `/vectors/clear`, which take none',
  DIMENSION_MISMATCH:
    'a vector or query vector whose length differs from the session dimension, from `dimensions`, or from the other vectors of the request; `details`: `{ path, expected, actual }`',
  ZERO_VECTOR: 'an all-zero vector or query vector under `cosine` (its similarity is undefined); `details.path`',
  BATCH_TOO_LARGE: '`vectors`, `ids`, `queryVectors` or `texts` longer than its cap in `GET /limits`; `details`: `{ path, limit, actual }`',
  INVALID_CURSOR:
    '`POST /vectors/list` got a `cursor` it did not hand out for this session (made up, damaged, from another session, or from before a server restart), or handed out under another `orderBy`; `details.path`',
  INVALID_IMPORT:
    "`POST /vectors/import` got a body that is not a tempvec export: no header line, a header of another format or version, or fewer or more vector lines than the header's `count` (a truncated body); nothing is imported; `details`: `{ path, line }`",
  METRIC_LOCKED: '`metric` differs from the metric of an initialized session (reset the index to change it); `details`: `{ path, expected, actual }`',
  VECTOR_TYPE_LOCKED:
    '`vectorType` differs from the storage type of an initialized session (reset the index to change it); `details`: `{ path, expected, actual }`',
  ANALYZER_LOCKED:
    "`analyzer` differs from the analyzer the session's first text fixed (reset the index to change it); `details`: `{ path, expected, actual }`",
  ANALYZER_CHANGED:
    "the session's analyzer changed (a reset, or another request's first text) before each of a write's turns, 3 times in a row (its texts are analysed again, in slices, each time); nothing of that request is stored, send it again; `details`: `{ analyzer, analyses }`",
  EMBEDDING_LOCKED:
    '`embedding` differs from the embedding model of an initialized session (its first add that embedded a text, or named one, fixed it; a session whose vectors were given has none): reset the index to change it; `details`: `{ path, expected, actual }`',
  NO_EMBEDDING_MODEL:
    'a record with text and no vector, or a query `{"text": ...}`, in a session whose vectors were given without an embedding model (send vectors, or reset the index), or a text query in a session with no model yet; `details`: `{ dimensions, embedding }`',
  QUERY_TEXT_EMPTY: "a query text has no terms under the session's analyzer (empty, punctuation, or only stop words); `details`: `{ path, analyzer }`",
  CAPACITY_EXCEEDED: 'an add would take the session past `maxVectors`; nothing of that request is stored; `details`: `{ maxVectors, vectorCount, adding }`',
  VECTOR_NOT_FOUND: '`/vectors/get` or a `/vectors/metadata/*` route names an id that is not stored; `details`: `{ path: "/id", id }`',
  NOT_FOUND: 'no such route',
  METHOD_NOT_ALLOWED: 'the route exists with another method (the `Allow` header lists it)',
  PAYLOAD_TOO_LARGE: 'the body is larger than `MAX_BODY_BYTES`',
  IMPORT_LINE_TOO_LARGE:
    'a line of a `POST /vectors/import` body is longer than `MAX_BODY_BYTES` (refused once that many bytes of it arrived); nothing is imported; `details`: `{ path, line, limit }`',
  REQUEST_TIMEOUT:
    'the headers took longer than `HEADERS_TIMEOUT_MS`, or the body arrived slower than `MIN_BODY_BYTES_PER_SEC` after `the first 10 s of a body`; the connection is closed',
  HEADERS_TOO_LARGE: "the request line and headers are larger than Node's limit (16 KiB)",
  BAD_REQUEST: 'a request that is not valid HTTP (answered by the server before any route)',
  ANSWER_TOO_LARGE:
    'the answer of a search, search-many, get-many or list would be larger than `MAX_ANSWER_BYTES` (estimated before anything is written); ask for fewer queries or ids, a lower `topK`/`limit`, or no metadata; `details`: `{ answerBytes, maxAnswerBytes }`',
  RATE_LIMITED:
    'too many `POST /token` from one address, or requests with one token, or more than `MAX_BODIES_IN_FLIGHT_PER_TOKEN` bodies (or a second import) of one token at once (`Retry-After` says when to retry)',
  TOO_MANY_SESSIONS:
    '`POST /token` from an address (IPv6: its /64) that already holds `MAX_SESSIONS_PER_ADDRESS` live sessions (`Retry-After`; a session frees its place when it expires)',
  SERVER_AT_CAPACITY:
    '`POST /token` while `MAX_SESSIONS` sessions are live, or a body, an add, a metadata change, an import, a search or a token that would take what the server holds past `MEMORY_BUDGET_BYTES`, or (with `DATA_DIR`) a change the disk did not take (full, I/O error; nothing of it is kept), or more than `MAX_BODIES_IN_FLIGHT` bodies or `MAX_BODY_BYTES_IN_FLIGHT` bytes being received or `MAX_IMPORTS_IN_FLIGHT` imports, or a session that needs a WebAssembly memory past `MAX_WASM_MEMORIES` or one the system cannot reserve (`Retry-After`)',
  INSTANCE_UNAVAILABLE:
    "the instance holding the token's session is down or restarting (behind the cluster's nginx), or this instance is still restoring its sessions from disk (`Retry-After`); other sessions are not affected",
  KERNEL_THREAD_FAILED:
    'the kernel thread running a search stopped (out of memory, a fault); only the searches it held fail, the pool starts another thread, no data is lost; retry (`Retry-After`)',
  EMBEDDING_BUSY:
    'the texts of a request to embed (`POST /embed`) would take the texts being embedded past `EMBEDDING_TEXTS_IN_FLIGHT_PER_TOKEN` for its token or 8 times that in all; nothing is embedded, retry (`Retry-After`); `details`: `{ scope, textsInFlight, textsAsked, limit }`',
  EMBEDDING_UNAVAILABLE:
    'no embedding thread could take the texts: the thread embedding them stopped (out of memory, a fault; the pool starts another), or the model could not be loaded; with `EMBEDDING_URL`, the endpoint timed out, was unreachable or answered 5xx or 429 on each of `EMBEDDING_ATTEMPTS` tries; retry (`Retry-After`)',
  EMBEDDING_UPSTREAM_ERROR:
    'with `EMBEDDING_URL`: the embedding endpoint answered 4xx (a wrong key or model), or an answer that is not what the protocol says (not JSON, a vector missing or of another dimension, a value not a finite number); nothing is embedded; `details`: `{ model, tries, upstreamStatus? }`',
  DISK_QUOTA_EXCEEDED:
    'with `DATA_DIR`: a change that would take the bytes of the data directory past `DATA_DIR_MAX_BYTES`; nothing of it is kept (`Retry-After`; a compaction may be making room)',
  SESSION_LOG_FULL:
    "with `DATA_DIR`: a change that would take the session's log past `MAX_SESSION_LOG_BYTES`; nothing of it is kept (`Retry-After` when a compaction is making room; otherwise delete vectors or clear the session)",
  INTERNAL_ERROR: 'a bug; the body carries no internals',
};

const KIB = 1024;
const MIB = 1024 * KIB;

/** A default as the table shows it, with a readable unit where the variable has one. */
function formatDefault(name: string, key: string, value: number | string | (() => number)): string {
  const machine = (MACHINE_DEPENDENT_DEFAULTS as Record<string, string | undefined>)[name];
  if (machine) return machine;
  if (typeof value === 'function') throw new Error(`${name}: a default read from the machine needs its wording in MACHINE_DEPENDENT_DEFAULTS`);
  if (value === '') return '(empty)';
  if (typeof value === 'string') return `\`${value}\``;
  let unit = '';
  if (key.endsWith('Ms') && value >= 60_000 && value % 60_000 === 0) unit = ` (${value / 60_000} min)`;
  else if (key.endsWith('Bytes') && value >= MIB && value % MIB === 0) unit = ` (${value / MIB} MiB)`;
  else if (key.endsWith('Bytes') && value >= KIB && value % KIB === 0) unit = ` (${value / KIB} KiB)`;
  return `\`${value}\`${unit}`;
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

export function configTable(): string {
  const rows = CONFIG_VARIABLES.map(([name, key, fallback, meaning]) => `| \`${name}\` | ${formatDefault(name, key, fallback)} | ${cell(meaning)} |`);
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

export function errorTable(): string {
  const rows = (Object.entries(ERROR_CODES) as [ErrorCode, number][]).map(([code, status]) => {
    const condition = ERROR_CONDITIONS[code];
    if (!condition) throw new Error(`error code ${code} has no condition in scripts/doc-tables.ts`);
    return `| ${status} | \`${code}\` | ${cell(condition)} |`;
  });
  return ['| status | code | when |', '|---|---|---|', ...rows].join('\n');
}

/** The request path as app.ts builds it, outermost first. */
export function requestPathTable(): string {
  const rows = REQUEST_PATH.map((step, i) => `| ${i + 1} | ${step.name} | \`${step.file}\` | ${cell(step.answers)} |`);
  return ['| # | step | file | what it may answer |', '|---|---|---|---|', ...rows].join('\n');
}

/** Each doc and the tables generated into it. */
export const DOCS: readonly { path: string; tables: Record<string, () => string> }[] = [
  { path: README_PATH, tables: { 'config-table': configTable } },
  { path: API_PATH, tables: { 'error-table': errorTable } },
  { path: LIFECYCLE_PATH, tables: { 'request-path-table': requestPathTable } },
  ...RESULTS_DOCS.map((path) => ({ path, tables: resultsTables(path) })),
];

const markers = (name: string) => [`<!-- ${name}: generated by npm run docs -->`, `<!-- /${name} -->`] as const;

/** The text between a table's markers in `text` (undefined when the markers are missing). */
export function tableIn(text: string, name: string): string | undefined {
  const [start, end] = markers(name);
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) return undefined;
  return text.slice(from + start.length, to).trim();
}

/** `text` (the doc at `path`) with each of `tables` rewritten. */
export function withTables(text: string, path: string, tables: Record<string, () => string>): string {
  let out = text;
  for (const [name, render] of Object.entries(tables)) {
    const [start, end] = markers(name);
    const from = out.indexOf(start);
    const to = out.indexOf(end);
    if (from < 0 || to < from) throw new Error(`${path} has no "${start}" ... "${end}" markers`);
    out = `${out.slice(0, from + start.length)}\n${render()}\n${out.slice(to)}`;
  }
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const check = process.argv.includes('--check');
  let stale = false;
  for (const { path, tables } of DOCS) {
    const name = relative(process.cwd(), path);
    const text = readFileSync(path, 'utf8');
    const updated = withTables(text, name, tables);
    if (updated === text) console.log(`${name}: tables up to date`);
    else if (check) {
      console.error(`${name}: tables out of date: run npm run docs`);
      stale = true;
    } else {
      writeFileSync(path, updated);
      console.log(`${name}: tables updated`);
    }
  }
  if (stale) process.exit(1);
}
