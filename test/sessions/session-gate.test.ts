// SessionGate: searches run side by side; a write waits for those in flight,
// runs alone, and goes before searches that arrive after it.
import { expect } from 'chai';
import { SessionGate } from '../../src/sessions/session-gate.js';

/** A promise and the function that settles it. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('SessionGate', () => {
  it("runs a turn at once, in the caller's tick, when the gate is free", async () => {
    const gate = new SessionGate();
    const seen: string[] = [];
    const write = gate.write(() => seen.push('write'));
    const search = gate.search(() => seen.push('search'));
    expect(seen).to.deep.equal(['write', 'search']);
    await Promise.all([write, search]);
    expect(gate.busy).to.equal(false);
  });

  it('runs searches side by side; a write waits for them all, then runs alone', async () => {
    const gate = new SessionGate();
    const seen: string[] = [];
    const [one, two] = [deferred(), deferred()];
    const first = gate.search(async () => {
      seen.push('search 1 starts');
      await one.promise;
      seen.push('search 1 ends');
    });
    const second = gate.search(async () => {
      seen.push('search 2 starts');
      await two.promise;
      seen.push('search 2 ends');
    });
    const write = gate.write(() => {
      seen.push('write');
      expect(gate.writing).to.equal(true);
    });
    // Arrives after the waiting write: waits for it.
    const third = gate.search(() => seen.push('search 3'));
    expect(seen).to.deep.equal(['search 1 starts', 'search 2 starts']);
    one.resolve();
    await first;
    expect(seen).to.not.include('write');
    two.resolve();
    await Promise.all([second, write, third]);
    expect(seen).to.deep.equal(['search 1 starts', 'search 2 starts', 'search 1 ends', 'search 2 ends', 'write', 'search 3']);
    expect(gate.writing).to.equal(false);
    expect(gate.busy).to.equal(false);
  });

  it('runs waiting writes one at a time, in order, before the searches behind them', async () => {
    const gate = new SessionGate();
    const seen: string[] = [];
    const running = deferred();
    const search = gate.search(() => running.promise);
    const writes = [1, 2].map((n) => gate.write(() => seen.push(`write ${n}`)));
    const later = gate.search(() => seen.push('search'));
    running.resolve();
    await Promise.all([search, ...writes, later]);
    expect(seen).to.deep.equal(['write 1', 'write 2', 'search']);
  });

  it('passes the turn on when a turn throws or its promise rejects', async () => {
    const gate = new SessionGate();
    const failing = gate.search(async () => {
      throw new Error('kernel thread died');
    });
    const write = gate.write(() => {
      throw new Error('disk full');
    });
    const after = gate.search(() => 'ran');
    const reason = (p: Promise<unknown>) =>
      p.then(
        () => 'settled',
        (err: Error) => err.message,
      );
    expect(await reason(failing)).to.equal('kernel thread died');
    expect(await reason(write)).to.equal('disk full');
    expect(await after).to.equal('ran');
    expect(gate.busy).to.equal(false);
  });

  it('holds the gate through a write turn that returns a promise (a change logged in pieces), and passes it on if that rejects', async () => {
    const gate = new SessionGate();
    const seen: string[] = [];
    const logged = deferred();
    const write = gate.write(async () => {
      seen.push('write logs');
      await logged.promise;
      seen.push('write applies');
      return 'added';
    });
    const search = gate.search(() => seen.push('search'));
    const next = gate.write(() => seen.push('next write'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).to.deep.equal(['write logs']);
    expect(gate.writing).to.equal(true);
    logged.resolve();
    expect(await write).to.equal('added');
    await Promise.all([search, next]);
    expect(seen).to.deep.equal(['write logs', 'write applies', 'next write', 'search']);
    const refused = gate.write(async () => {
      await Promise.resolve();
      throw new Error('disk full');
    });
    expect(
      await refused.then(
        () => 'settled',
        (err: Error) => err.message,
      ),
    ).to.equal('disk full');
    expect(gate.busy).to.equal(false);
    expect(gate.writing).to.equal(false);
  });
});
