// A large add-many is applied in slices that give the event loop back, its
// session's turn held: the session's reads sent meanwhile (get, get-many,
// has, metadata/get, GET /session, search) see all of it or none of it.
import { expect } from 'chai';
import { Session } from '../../src/sessions/session.js';
import { expectOk } from '../helpers/http.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';
import { randomVector, seededRng } from '../helpers/random.js';

const DIM = 64;
const ROWS = 1500;
const ADDED = 500;
const rng = seededRng(7);
const vectors = Array.from({ length: ROWS + ADDED }, () => randomVector(rng, DIM));

/** Rows 0..count-1 of generation `gen`: wide metadata and a text, so each row takes a while to write. */
function records(gen: number, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    id: `v${i}`,
    vector: vectors[i],
    metadata: { gen, i, tags: Array.from({ length: 40 }, (_, k) => `t${(i + k) % 97}`), pad: 'x'.repeat(1500) },
    text: `gen${gen} ${'word '.repeat(100)}`,
  }));
}

describe('add-many applied in slices', () => {
  let live: LiveApp;
  before(async () => {
    live = await startApp({ tokenRatePerMin: 0, requestRatePerSec: 0, maxAddManyBatch: ROWS + ADDED });
  });
  after(() => live.close());

  it("lets the session's reads in between slices, each seeing all of the change or none of it", async () => {
    const token = await live.newToken();
    expectOk(await live.send('POST', '/vectors/add-many', { token, body: { vectors: records(1, ROWS) } }));
    // Reads that found an add halfway applied (and waited for it).
    let waited = 0;
    const settled = Session.prototype.settled;
    Session.prototype.settled = function (this: Session) {
      if (this.index.applying) waited++;
      return settled.call(this);
    };
    try {
      let done = false;
      const write = live.send('POST', '/vectors/add-many', { token, body: { vectors: records(2, ROWS + ADDED) } }).finally(() => (done = true));
      const seen = new Set<number>();
      const sample = ['v0', `v${ROWS / 2}`, `v${ROWS - 1}`, `v${ROWS + ADDED - 1}`];
      // Reads that take the session's turn (get-many, search) wait out the whole apply; the others only
      // wait for its last slice (settled()). Each kind in a loop of its own, so the second kind keeps
      // arriving while the add is halfway applied.
      const inTurn = async () => {
        while (!done) {
          const [many, search] = await Promise.all([
            live.send('POST', '/vectors/get-many', { token, body: { ids: sample } }),
            live.send('POST', '/search', { token, body: { queryText: 'gen1 gen2', topK: 5, filter: { gen: 1 } } }),
          ]);
          const gens = new Set(expectOk(many).vectors.map((v: { metadata: { gen: number } }) => v.metadata.gen));
          // A halfway change would show v0 of gen 2 beside rows of gen 1 or without the added rows.
          // Each reply is of one generation: gen 1 without the added rows, or gen 2 with all of them.
          const gen = expectOk(many).notFound.length === 1 ? 1 : 2;
          expect([...gens]).to.deep.equal([gen]);
          expect(expectOk(search).results.length).to.be.oneOf([0, 5]);
          seen.add(gen);
        }
      };
      const settling = async () => {
        while (!done) {
          const [one, has, meta, session] = await Promise.all([
            live.send('POST', '/vectors/get', { token, body: { id: `v${ROWS - 1}` } }),
            live.send('POST', '/vectors/has', { token, body: { id: `v${ROWS + ADDED - 1}` } }),
            live.send('POST', '/vectors/metadata/get', { token, body: { id: 'v0' } }),
            live.send('GET', '/session', { token }),
          ]);
          // Sent side by side, these may fall before or after the change; each is one or the other.
          expect(expectOk(one).vector.metadata.gen).to.be.oneOf([1, 2]);
          expect(expectOk(meta).metadata.gen).to.be.oneOf([1, 2]);
          expect(expectOk(session).session.vectorCount).to.be.oneOf([ROWS, ROWS + ADDED]);
          expect(expectOk(has).has).to.be.oneOf([true, false]);
        }
      };
      await Promise.all([inTurn(), settling()]);
      expectOk(await write);
      expect(waited, 'reads that arrived while the add was halfway applied').to.be.greaterThan(0);
      const after = expectOk(await live.send('POST', '/vectors/get-many', { token, body: { ids: sample } }));
      expect(after.vectors.map((v: { metadata: { gen: number } }) => v.metadata.gen)).to.deep.equal([2, 2, 2, 2]);
      expect(seen.has(1) || seen.has(2)).to.equal(true);
    } finally {
      Session.prototype.settled = settled;
    }
  });
});
