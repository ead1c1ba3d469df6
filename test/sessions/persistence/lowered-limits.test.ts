// Replay never refuses what was acknowledged: a session written under higher
// limits (MAX_TEXT_BYTES, MAX_VECTORS_PER_SESSION) reopens whole after they
// are lowered, and the lowered limits apply to the changes that follow.
import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { ApiError } from '../../../src/errors.js';
import type { Session } from '../../../src/sessions/session.js';
import type { SessionStore } from '../../../src/sessions/session-store.js';
import { useDataDirStores } from '../../helpers/data-dir-stores.js';

describe('replay under limits lowered since the log was written', () => {
  const stores = useDataDirStores('tempvec-lowered-');
  const open = stores.open;

  const text = (i: number, bytes: number) => `t${i} ${'word '.repeat(bytes / 5)}`.slice(0, bytes);

  async function add(store: SessionStore, session: Session, from: number, n: number, textBytes: number) {
    await store.writes.inTurn(session, async () => {
      const records = Array.from({ length: n }, (_, i) => ({ id: `v${from + i}`, vector: [from + i + 1, 1, 0], text: text(from + i, textBytes) }));
      await store.writes.upsert(session, store.writes.prepareUpsert(session, records, { metric: 'l2' }));
    });
  }

  function refused(fn: () => Promise<unknown>): Promise<ApiError> {
    return fn().then(
      () => {
        throw new Error('expected a refusal');
      },
      (err) => {
        expect(err).to.be.instanceOf(ApiError);
        return err as ApiError;
      },
    );
  }

  it('reopens every acknowledged vector and text after MAX_TEXT_BYTES and MAX_VECTORS_PER_SESSION were lowered; new changes meet the lowered limits', async () => {
    const before = open({ maxTextBytes: 4096, maxVectorsPerSession: 100 });
    const { token, session } = before.create();
    await add(before, session, 0, 60, 3000);
    await before.whenIdle();

    const after = open({ maxTextBytes: 1000, maxVectorsPerSession: 20 });
    const reopened = await after.authenticate(token);
    expect(reopened.index.size, 'every acknowledged vector').to.equal(60);
    // A text as its JSON string literal: the 3,000 bytes and two quotes.
    expect(reopened.index.textJsonBytes('v59'), 'every acknowledged text, whole').to.equal(3002);
    expect(
      readdirSync(stores.dir()).filter((name) => name.endsWith('.corrupt')),
      'nothing set aside',
    ).to.deep.equal([]);
    // The lowered limits hold for what comes next.
    expect((await refused(() => add(after, reopened, 100, 1, 10))).code).to.equal('CAPACITY_EXCEEDED');
    expect((await refused(() => add(after, reopened, 0, 1, 2000))).code).to.equal('VALIDATION_ERROR');
    await add(after, reopened, 0, 1, 500);
    expect(reopened.index.size).to.equal(60);
  });
});
