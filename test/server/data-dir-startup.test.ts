// An unusable DATA_DIR, or one another process holds, stops the server at
// start-up with a one-line message and exit code 1, instead of a server whose
// every POST /token is 503 or whose writes interleave with another's.
import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServer, startSourceServer } from '../../bench/lib/spawn-server.js';

async function startWith(env: Record<string, string>): Promise<{ code: number | string; output: string }> {
  const server = spawnServer({ entry: 'source', env });
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 15_000);
  const code = await server.exited;
  clearTimeout(timer);
  return { code, output: server.output() };
}

describe('start-up with an unusable DATA_DIR', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'tempvec-startup-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 1 with a one-line message when DATA_DIR cannot be created', async () => {
    writeFileSync(join(dir, 'file'), 'x');
    const { code, output } = await startWith({ DATA_DIR: join(dir, 'file', 'sessions') });
    expect(code).to.equal(1);
    expect(output.trim()).to.match(/^tempvec: cannot start: DATA_DIR ".*" does not exist and cannot be created \(\w+\)$/);
  });

  it('exits 1 with a one-line message on a bad FSYNC value', async () => {
    const { code, output } = await startWith({ DATA_DIR: dir, FSYNC: 'sometimes' });
    expect(code).to.equal(1);
    expect(output.trim()).to.equal('tempvec: cannot start: FSYNC must be one of never, always, got "sometimes"');
  });

  describe('one process per DATA_DIR', () => {
    const lockOf = () => join(dir, 'tempvec.lock');
    const bootId = () => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

    it('refuses a second process with exit 1 and leaves the first untouched', async () => {
      const first = await startSourceServer({ DATA_DIR: dir });
      try {
        const token = (await (await fetch(`${first.url}/token`, { method: 'POST' })).json()) as { token: string };
        const lock = readFileSync(lockOf(), 'utf8');
        expect(lock.split(' ')[0]).to.equal(String(first.child.pid));

        const { code, output } = await startWith({ DATA_DIR: dir });
        expect(code).to.equal(1);
        expect(output.trim()).to.match(
          new RegExp(
            `^tempvec: cannot start: DATA_DIR ".*" is in use by process ${first.child.pid} on host \\S+, which is running \\(lock file .*tempvec\\.lock\\); one process per DATA_DIR\\. A lock whose process is gone is taken over without deleting it: at once on this host, after LOCK_STALE_MS from another$`,
          ),
        );

        expect(readFileSync(lockOf(), 'utf8')).to.equal(lock);
        const added = await fetch(`${first.url}/vectors/add`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ id: 'a', vector: [1, 2, 3] }),
        });
        expect(added.status).to.equal(200);
      } finally {
        first.child.kill('SIGTERM');
        expect(await first.exited).to.equal(0);
      }
      expect(existsSync(lockOf()), 'released on exit').to.equal(false);
    });

    it('takes over the lock of a process that is gone (SIGKILL), or of an earlier boot', async () => {
      const first = await startSourceServer({ DATA_DIR: dir });
      first.child.kill('SIGKILL');
      await first.exited;
      expect(existsSync(lockOf()), 'left behind by SIGKILL').to.equal(true);
      const second = await startSourceServer({ DATA_DIR: dir });
      expect(readFileSync(lockOf(), 'utf8').split(' ')[0]).to.equal(String(second.child.pid));
      second.child.kill('SIGKILL');
      await second.exited;

      // A live pid (this test's own) in a lock of another boot: the pid may be another program's now.
      writeFileSync(lockOf(), `${process.pid} ${hostname()} not-${bootId()}\n`);
      const third = await startSourceServer({ DATA_DIR: dir });
      expect(readFileSync(lockOf(), 'utf8').split(' ')[0]).to.equal(String(third.child.pid));
      third.child.kill('SIGKILL');
      await third.exited;
    });

    it('refuses a lock of another host whose heartbeat beats; takes one gone quiet (a new container on the volume) within LOCK_STALE_MS', async () => {
      writeFileSync(lockOf(), `1 old-container ${bootId()} 99\n`);
      const beating = setInterval(() => utimesSync(lockOf(), new Date(), new Date()), 300);
      try {
        const other = await startWith({ DATA_DIR: dir, LOCK_STALE_MS: '2000' });
        expect(other.code).to.equal(1);
        expect(other.output).to.include('is in use by process 1 on host old-container, whose heartbeat is younger than LOCK_STALE_MS (2000 ms)');
      } finally {
        clearInterval(beating);
      }
      // The old container was killed: its lock's heartbeat stops; the new one waits it out and starts.
      utimesSync(lockOf(), new Date(), new Date());
      const started = Date.now();
      const next = await startSourceServer({ DATA_DIR: dir, LOCK_STALE_MS: '2000' });
      try {
        // Never taken while its heartbeat was fresh; taken within the stale interval plus a start-up.
        // (A start-up slower than 2 s on a loaded machine finds it stale at once, without waiting.)
        expect(Date.now() - started).to.be.within(2000, 2000 + 8000);
        if (!/waiting up to 2000 ms for it to go stale/.test(next.output())) expect(next.output()).to.not.include('is in use');
        expect(readFileSync(lockOf(), 'utf8').split(' ')[0]).to.equal(String(next.child.pid));
      } finally {
        next.child.kill('SIGKILL');
        await next.exited;
      }
    });
  });
});
