// Checks real responses against the OpenAPI document the server publishes:
// the status must be declared for the operation, the content type must be one
// of its media types, and a JSON body must validate (ajv, draft 2020-12)
// against the schema declared there. Records what it saw, so a test can ask
// whether every declared success and error code was exercised.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Reply } from './live-app.js';

// ajv-formats is CommonJS; its default export arrives wrapped under tsx.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

const DOC_ID = 'https://tempvec.invalid/openapi.json';
const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type OpenApiDoc = any;

/** Response headers whose presence the document must declare. */
const CHECKED_HEADERS = ['ratelimit', 'ratelimit-policy', 'retry-after'];

export class ResponseChecker {
  private readonly ajv: Ajv2020;
  /** "post /search 200" and "post /search 400 VALIDATION_ERROR" entries seen. */
  readonly seen = new Set<string>();

  constructor(readonly doc: OpenApiDoc) {
    // strict: false because the document also holds OpenAPI keywords (paths, responses...) and `x-check`.
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema(doc, DOC_ID);
  }

  /** Throws with the reason when `reply` is not what the document declares for `method path`. */
  check(method: string, requested: string, reply: Reply): void {
    const m = method.toLowerCase();
    const path = this.templateOf(requested);
    const operation = this.doc.paths[path]?.[m];
    if (!operation) throw new Error(`${method} ${path} is not in the OpenAPI document`);
    const declared = operation.responses[String(reply.status)];
    if (!declared)
      throw new Error(`${method} ${path} answered ${reply.status}, which the document does not declare: ${JSON.stringify(reply.body).slice(0, 300)}`);
    const key = `${m} ${path} ${reply.status}`;
    // The rate-limit and retry headers a reply carries must be declared for it.
    const declaredHeaders = Object.keys(declared.headers ?? {}).map((h) => h.toLowerCase());
    for (const name of CHECKED_HEADERS) {
      if (reply.headers.get(name) !== null && !declaredHeaders.includes(name)) throw new Error(`${key} sent ${name}, which the document does not declare`);
    }
    // 304, and 431 from Node's parser: no body.
    if (reply.status === 304 || !declared.content) {
      if (reply.text !== '') throw new Error(`${key} declares no body but sent ${reply.text.slice(0, 100)}`);
      this.seen.add(key);
      return;
    }
    const mediaType = (reply.headers.get('content-type') ?? '').split(';')[0].trim();
    if (!declared.content?.[mediaType]) {
      throw new Error(`${method} ${path} ${reply.status} sent ${mediaType}; declared: ${Object.keys(declared.content ?? {}).join(', ')}`);
    }
    if (mediaType === 'application/json') {
      const pointer = ['paths', path, m, 'responses', String(reply.status), 'content', mediaType, 'schema'].map(escapePointer).join('/');
      this.validate(`${DOC_ID}#/${pointer}`, reply.body, `${method} ${path} ${reply.status}`);
    }
    this.seen.add(reply.body?.success === false ? `${key} ${reply.body.error?.code}` : key);
  }

  /** The document's path for a requested one: itself, or the template (`/a/{b}`) it fills in. */
  templateOf(path: string): string {
    if (this.doc.paths[path]) return path;
    const matches = (template: string) => new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`).test(path);
    return Object.keys(this.doc.paths).find((template) => template.includes('{') && matches(template)) ?? path;
  }

  /** Whether `body` passes the request schema the document declares for `method path`. */
  requestValid(method: string, path: string, body: unknown): boolean {
    const pointer = ['paths', path, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema'].map(escapePointer).join('/');
    const ref = `${DOC_ID}#/${pointer}`;
    const validator = this.ajv.getSchema(ref) ?? this.ajv.compile({ $ref: ref });
    return validator(body) as boolean;
  }

  /** Validate `value` against the schema at `ref` (a URI into the document). */
  validate(ref: string, value: unknown, label: string): void {
    const validator = this.ajv.getSchema(ref) ?? this.ajv.compile({ $ref: ref });
    if (!validator(value)) {
      throw new Error(`${label}: body does not match its schema: ${this.ajv.errorsText(validator.errors)}\n${JSON.stringify(value).slice(0, 500)}`);
    }
  }

  /** Validate against a component schema, e.g. "ErrorResponse". */
  validateComponent(name: string, value: unknown): void {
    this.validate(`${DOC_ID}#/components/schemas/${escapePointer(name)}`, value, name);
  }
}

/**
 * fetch() adds "Cache-Control: no-cache" to a request that carries
 * If-None-Match, which (rightly) makes the server answer in full; a browser
 * revalidating its cache sends max-age=0 instead.
 */
export const REVALIDATE = { 'cache-control': 'max-age=0' } as const;
