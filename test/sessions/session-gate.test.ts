// SessionGate: a search that settles later holds the session; writes wait
// for it and go before searches that wait; free, a turn runs at once.
import { expect } from 'chai';
import { SessionGate } from '../../src/sessions/session-gate.js';

/** A promise and the function that settles it. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => { resolve = r; });
  return { promise, resolve };
}

describe('SessionGate', () => {
  it('runs a turn at once, in the caller\'s tick, when the gate is free', async () => {
    const gate = new SessionGate();
    const seen: string[] = [];
    const write = gate.write(() => seen.push('write'));
    const search = gate.search(() => seen.push('search'));
    expect(seen).to.deep.equal(['write', 'search']);
    await Promise.all([write, search]);
    expect(gate.busy).to.equal(false);
  });

  it('makes a write wait for a search in flight, and go before searches waiting', async () => {
    const gate = new SessionGate();
    const seen: string[] = [];
    const running = deferred();
    const first = gate.search(async () => { seen.push('search 1 starts'); await running.promise; seen.push('search 1 ends'); });
    const second = gate.search(() => seen.push('search 2'));
    const write = gate.write(() => { seen.push('write'); expect(gate.writing).to.equal(true); });
    expect(seen).to.deep.equal(['search 1 starts']);
    running.resolve();
    await Promise.all([first, second, write]);
    expect(seen).to.deep.equal(['search 1 starts', 'search 1 ends', 'write', 'search 2']);
    expect(gate.writing).to.equal(false);
  });

  it('passes the turn on when a turn throws or its promise rejects', async () => {
    const gate = new SessionGate();
    const failing = gate.search(async () => { throw new Error('kernel thread died'); });
    const write = gate.write(() => { throw new Error('disk full'); });
    const after = gate.search(() => 'ran');
    const reason = (p: Promise<unknown>) => p.then(() => 'settled', (err: Error) => err.message);
    expect(await reason(failing)).to.equal('kernel thread died');
    expect(await reason(write)).to.equal('disk full');
    expect(await after).to.equal('ran');
    expect(gate.busy).to.equal(false);
  });
});
