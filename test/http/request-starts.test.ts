// RequestStarts (src/http/request-starts.ts): a burst of requests begins for
// START_BUDGET_MS of a turn; the rest begin START_PER_TURN a turn, round-robin
// by token, and a request whose client left while waiting never begins.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect } from 'chai';
import { RequestStarts, START_BUDGET_MS, START_PER_TURN } from '../../src/http/request-starts.js';
import { useServer } from '../helpers/http.js';

interface Fake {
  name: string;
  req: IncomingMessage;
  res: ServerResponse;
}

function fake(name: string, token?: string, destroyed = false): Fake {
  const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
  return { name, req: { headers } as IncomingMessage, res: { destroyed } as ServerResponse };
}

/** Turns of the event loop counted by an immediate that sets itself again. */
function turnCounter() {
  const state = { turn: 0, running: true };
  const tick = () => {
    state.turn++;
    if (state.running) setImmediate(tick);
  };
  setImmediate(tick);
  return state;
}

const nextTurns = (n: number) =>
  new Promise<void>((resolve) => {
    let left = n;
    const step = () => (--left <= 0 ? resolve() : setImmediate(step));
    setImmediate(step);
  });

/** RequestStarts over a fake clock where each start takes `msEach`; `started` has the names in the order they began. */
function recorded(msEach: number, turns?: { turn: number }) {
  let clock = 0;
  const started: { name: string; turn: number }[] = [];
  const starts = new RequestStarts(
    (req) => {
      started.push({ name: (req as unknown as { name: string }).name, turn: turns?.turn ?? 0 });
      clock += msEach;
    },
    START_BUDGET_MS,
    () => clock,
  );
  const send = (f: Fake) => {
    (f.req as unknown as { name: string }).name = f.name;
    starts.listener(f.req, f.res);
  };
  const names = () => started.map((s) => s.name);
  return { starts, started, send, names };
}

const settled = async (starts: RequestStarts) => {
  while (starts.waitingCount > 0) await nextTurns(1);
};

describe('RequestStarts', () => {
  it('begins a burst for the budget of its turn, then START_PER_TURN a turn, each on a later turn', async () => {
    const turns = turnCounter();
    const { starts, started, send, names } = recorded(1, turns);
    const burst = Array.from({ length: 20 }, (_, i) => fake(`r${i}`, 'same'));
    for (const f of burst) send(f);
    expect(names()).to.deep.equal(burst.slice(0, START_BUDGET_MS).map((f) => f.name));
    expect(starts.waitingCount).to.equal(20 - START_BUDGET_MS);
    await settled(starts);
    turns.running = false;
    // In arrival order (one token), all of them, START_PER_TURN on each later turn.
    expect(names()).to.deep.equal(burst.map((f) => f.name));
    const perTurn = new Map<number, number>();
    for (const s of started.slice(START_BUDGET_MS)) perTurn.set(s.turn, (perTurn.get(s.turn) ?? 0) + 1);
    expect(Math.max(...perTurn.values())).to.equal(START_PER_TURN);
    expect(perTurn.size).to.equal(Math.ceil((20 - START_BUDGET_MS) / START_PER_TURN));
  });

  it('starts a neighbour waiting behind a burst of many tokens within one round of them', async () => {
    const { starts, send, names } = recorded(1);
    // 32 tokens with 8 requests each, then the neighbour.
    for (let k = 0; k < 8; k++) for (let t = 0; t < 32; t++) send(fake(`a${t}.${k}`, `attacker-${t}`));
    send(fake('neighbour', 'neighbour'));
    await settled(starts);
    expect(names()).to.have.length(8 * 32 + 1);
    // Behind the budget's starts, and then at most one start of each of the 32 other tokens.
    expect(names().indexOf('neighbour')).to.be.at.most(START_BUDGET_MS + 32);
  });

  it('begins at once when nothing waits, on every turn', async () => {
    const { starts, send, names } = recorded(1);
    for (let turn = 0; turn < 5; turn++) {
      for (let i = 0; i < START_BUDGET_MS; i++) send(fake(`t${turn}.${i}`));
      expect(names()).to.have.length((turn + 1) * START_BUDGET_MS);
      await nextTurns(1);
    }
    expect(starts.waitingCount).to.equal(0);
  });

  it('never begins a request whose client left while it waited', async () => {
    const { starts, send, names } = recorded(10);
    for (const f of [fake('first'), fake('gone', undefined, true), fake('last')]) send(f);
    await settled(starts);
    expect(names()).to.deep.equal(['first', 'last']);
  });

  describe('in the server', () => {
    const server = useServer();
    it('answers every request of a burst, the waiting ones included', async () => {
      const answers = await Promise.all(Array.from({ length: 200 }, () => server.get('/limits').then((r) => r.status)));
      expect(answers.every((s) => s === 200)).to.equal(true);
    });
  });
});
