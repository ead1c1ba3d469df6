// Session.viewJson: the text of view(now), reused only while nothing it shows has changed.
import { expect } from 'chai';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { Session } from '../../src/sessions/session.js';

const TTL = 60_000;

describe('Session.viewJson', () => {
  it('is always JSON.stringify(view(now)) through every kind of change', () => {
    const session = new Session('hash', loadKernelModule(), 10, TTL, 1_000);
    let now = 1_000;
    const expectSame = (label: string) => expect(session.viewJson(now), label).to.equal(JSON.stringify(session.view(now)));
    expectSame('new');
    expectSame('again, same millisecond');
    now += 1;
    expectSame('a millisecond later');
    session.touch(now);
    expectSame('after an access in the same millisecond');
    session.index.upsert([{ id: 'a', vector: [1, 0] }]);
    expectSame('after the first add (initialized, dimensions, count)');
    session.markUpdated(now);
    expectSame('after markUpdated');
    session.index.upsert([{ id: 'b', vector: [0, 1] }]);
    expectSame('after a second add');
    session.index.delete(['a']);
    expectSame('after a delete');
    session.index.upsert([{ id: 'c', vector: [1, 1] }]);
    expectSame('after an add back to the same count');
    session.index.clear();
    expectSame('after clear');
    session.index.reset();
    expectSame('after reset');
    now += TTL * 2;
    expectSame('past the expiry (ttlMsRemaining 0)');
  });
});
