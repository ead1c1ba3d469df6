// Shared request bodies and checks for the HTTP suites.
import { expect } from 'chai';
import { expectOk, type TestServer } from '../helpers/http.js';

/** ISO 8601 UTC with milliseconds, as Date.prototype.toISOString writes it. */
export const ISO_8601_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const SESSION_FIELDS = [
  'sessionId',
  'createdAt',
  'updatedAt',
  'lastAccessedAt',
  'expiresAt',
  'ttlMsRemaining',
  'initialized',
  'vectorCount',
  'maxVectors',
  'config',
];

/** Every field of the spec's session table, with its type; time fields ISO 8601. */
export function expectSessionShape(session: any): void {
  expect(session).to.have.all.keys(...SESSION_FIELDS);
  expect(session.sessionId).to.be.a('string').and.not.equal('');
  for (const field of ['createdAt', 'updatedAt', 'lastAccessedAt', 'expiresAt']) {
    expect(session[field], field).to.match(ISO_8601_UTC);
  }
  expect(session.ttlMsRemaining).to.be.a('number').and.at.least(0);
  expect(session.initialized).to.be.a('boolean');
  expect(session.vectorCount).to.be.a('number');
  expect(session.maxVectors).to.be.a('number');
  expect(session.config).to.have.all.keys('dimensions', 'metric', 'vectorType', 'backend', 'analyzer', 'embedding');
  expect(session.config.vectorType).to.equal('float32');
  expect(session.config.backend).to.equal('wasm-simd128');
}

/** A new token whose session holds `vectors` (added with add-many and `options`). */
export async function sessionWith(
  api: TestServer,
  vectors: { id: string; vector: number[]; metadata?: object; text?: string }[],
  options: object = {},
): Promise<string> {
  const token = await api.token();
  if (vectors.length > 0) expectOk(await api.post('/vectors/add-many', { token, body: { vectors, ...options } }));
  return token;
}

/** The session as GET /session reports it. */
export async function sessionOf(api: TestServer, token: string): Promise<any> {
  return expectOk(await api.get('/session', { token })).session;
}

/** Everything a session holds, read through the API (for "nothing changed" checks). */
export async function snapshot(api: TestServer, token: string, ids: string[]): Promise<unknown> {
  const session = await sessionOf(api, token);
  const many = expectOk(await api.post('/vectors/get-many', { token, body: { ids } }));
  return { vectorCount: session.vectorCount, initialized: session.initialized, config: session.config, vectors: many.vectors, notFound: many.notFound };
}
