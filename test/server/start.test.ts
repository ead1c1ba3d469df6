// npm start's launcher (src/start.ts): a budget that cannot fit is refused
// with one line and exit 1; otherwise the server runs with a heap limit set
// from the budget, and signals and the exit code pass through.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { procStat } from '../../src/sessions/persistence/dir-lock.js';
import { spawnServer } from '../../bench/lib/spawn-server.js';
import { assertBudgetFits, HEAP_BASELINE_BYTES, heapCapBytes, heapLimitMiB } from '../../src/limits/heap-limit.js';

const MiB = 1024 * 1024;

/** npm start's launcher (src/start.ts) with `env`. */
const launch = (env: Record<string, string>) => spawnServer({ entry: 'launcher', env });

describe('start-up and the heap limit', function () {
  this.timeout(60_000);

  it('refuses a budget the machine cannot hold: one line, exit 1', async () => {
    const run = launch({ MEMORY_BUDGET_BYTES: String(1024 ** 5) });
    expect(await run.exited).to.equal(1);
    expect(run.output().trim().split('\n')).to.have.length(1);
    expect(run.output()).to.match(/^tempvec: cannot start: MEMORY_BUDGET_BYTES=\d+ cannot fit: .* lower MEMORY_BUDGET_BYTES/);
  });

  it('refuses a MAX_BODY_BYTES larger than the budget', () => {
    expect(() => assertBudgetFits(loadConfig({ MEMORY_BUDGET_BYTES: '1000000', MAX_BODY_BYTES: '2000000' }), 64 * 1024 ** 3)).to.throw(/MAX_BODY_BYTES/);
    expect(() => assertBudgetFits(loadConfig({ MEMORY_BUDGET_BYTES: '0' }), 1)).to.not.throw();
  });

  it('sizes the heap limit to hold the budget, and caps the heap part to a smaller limit', () => {
    const config = loadConfig({ MEMORY_BUDGET_BYTES: String(2048 * MiB) });
    const limit = heapLimitMiB(config)!;
    expect(limit * MiB).to.be.greaterThan(config.memoryBudgetBytes + HEAP_BASELINE_BYTES);
    // With the heap limit the launcher sets, the whole budget may be heap.
    expect(heapCapBytes(config, limit * MiB)).to.be.at.least(config.memoryBudgetBytes);
    expect(heapCapBytes(config, 1024 * MiB)).to.be.lessThan(1024 * MiB);
    expect(heapLimitMiB(loadConfig({ MEMORY_BUDGET_BYTES: '0' }))).to.equal(null);
  });

  it('runs the server with that heap limit, passes SIGTERM on and exits 0', async () => {
    const run = launch({ MEMORY_BUDGET_BYTES: String(512 * MiB) });
    const url = await run.listening();
    const limits = await (await fetch(`${url}/limits`)).json();
    expect(limits.usage.memoryBudgetBytes).to.equal(512 * MiB);
    const server = execFileSync('ps', ['-o', 'args=', '--ppid', String(run.child.pid)], { encoding: 'utf8' });
    expect(server).to.include(`--max-old-space-size=${heapLimitMiB(loadConfig({ MEMORY_BUDGET_BYTES: String(512 * MiB) }))}`);
    run.child.kill('SIGTERM');
    expect(await run.exited).to.equal(0);
  });

  it('ends the server when the launcher is SIGKILLed; a launcher started right after takes its DATA_DIR', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tempvec-launcher-'));
    try {
      const first = launch({ DATA_DIR: dir });
      const url = await first.listening();
      const token = (await (await fetch(`${url}/token`, { method: 'POST' })).json()).token as string;
      const server = Number(execFileSync('ps', ['-o', 'pid=', '--ppid', String(first.child.pid)], { encoding: 'utf8' }).trim());
      expect(procStat(server)?.state).to.not.equal(undefined);
      first.child.kill('SIGKILL');
      await first.exited;
      const deadline = Date.now() + 15_000;
      while (procStat(server) && procStat(server)?.state !== 'Z' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      const state = procStat(server)?.state ?? 'gone';
      if (state !== 'gone' && state !== 'Z') process.kill(server, 'SIGKILL'); // not left running past a failure
      expect(state, 'the orphaned server exits').to.be.oneOf(['gone', 'Z']);
      expect(first.output()).to.include('launcher gone: finishing requests in flight');

      const second = launch({ DATA_DIR: dir });
      const again = await second.listening();
      const res = await fetch(`${again}/session`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, 'the session came back from DATA_DIR').to.equal(200);
      second.child.kill('SIGKILL');
      await second.exited;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
