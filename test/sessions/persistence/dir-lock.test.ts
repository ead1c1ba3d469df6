// The DATA_DIR lock against the processes a restart meets: a zombie (killed,
// not yet reaped), a pid reused, a live holder, a heartbeat gone quiet, a new
// container (another host name) on the same directory, and a holder that
// keeps beating. Real processes and files; each lock is judged as a second
// process would judge it (a holder other than this test's own process).
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { awaitStaleLock, LOCK_NAME, lockDir, onDirLockLost, procStat, thisProcess, type Holder } from '../../../src/sessions/persistence/dir-lock.js';
import { nodeFs } from '../../../src/sessions/persistence/journal-fs.js';
import { ConfigError, loadConfig, lockHeartbeatMs, publicLimits } from '../../../src/config.js';

const STALE_MS = 2000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const line = (h: Holder) => `${h.pid} ${h.host} ${h.boot} ${h.start}\n`;

/** A process that is a zombie: sh starts `sleep` in the background and execs into a program that never reaps it; the background one is SIGKILLed. */
async function zombie(): Promise<{ pid: number; done: () => void }> {
  const parent = spawn('sh', ['-c', 'sleep 60 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (chunk) => resolve(String(chunk).trim()))));
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && procStat(pid)?.state !== 'Z'; i++) await sleep(20);
  return { pid, done: () => parent.kill('SIGKILL') };
}

describe('DATA_DIR lock (dir-lock.ts)', function () {
  this.timeout(20_000);
  let dir: string;
  let path: string;
  const self = thisProcess();
  /** The process that tries to take the lock: this host and boot, another pid and start time. */
  const newcomer: Holder = { ...self, pid: 2 ** 22 + 1, start: '1' };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tempvec-lock-'));
    path = join(dir, LOCK_NAME);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const taken = () => expect(readFileSync(path, 'utf8')).to.equal(line(newcomer));
  const setAge = (ms: number) => utimesSync(path, (Date.now() - ms) / 1000, (Date.now() - ms) / 1000);

  it('reads LOCK_STALE_MS (at least 2000) and publishes it with the heartbeat in /limits persistence', () => {
    expect(loadConfig({}).lockStaleMs).to.equal(10_000);
    const config = loadConfig({ LOCK_STALE_MS: '2000' });
    expect(publicLimits(config).persistence).to.include({ lockStaleMs: 2000, lockHeartbeatMs: 666 });
    expect(lockHeartbeatMs(30_000)).to.equal(10_000);
    expect(() => loadConfig({ LOCK_STALE_MS: '1999' })).to.throw(ConfigError, 'LOCK_STALE_MS must be at least 2000, got 1999');
  });

  it('takes over the lock of a zombie at once, though kill(pid, 0) still succeeds on it', async () => {
    const z = await zombie();
    try {
      expect(procStat(z.pid)?.state).to.equal('Z');
      expect(() => process.kill(z.pid, 0), 'a zombie answers kill(pid, 0)').to.not.throw();
      writeFileSync(path, line({ ...self, pid: z.pid, start: procStat(z.pid)!.start }));
      lockDir(nodeFs, dir, STALE_MS, newcomer);
      taken();
    } finally {
      z.done();
    }
  });

  it('refuses a live holder on this host whatever its heartbeat, and takes the lock of a pid that is gone or reused', () => {
    writeFileSync(path, line(self));
    setAge(10 * STALE_MS);
    expect(() => lockDir(nodeFs, dir, STALE_MS, newcomer)).to.throw(new RegExp(`in use by process ${self.pid} on host \\S+, which is running`));
    expect(readFileSync(path, 'utf8')).to.equal(line(self));

    writeFileSync(path, line({ ...self, start: String(Number(self.start) + 1) })); // this pid, a later start: reused
    lockDir(nodeFs, dir, STALE_MS, newcomer);
    taken();

    rmSync(path);
    const gone = spawn('true');
    writeFileSync(path, line({ ...self, pid: gone.pid! }));
    return new Promise((resolve) => gone.once('exit', resolve)).then(() => {
      lockDir(nodeFs, dir, STALE_MS, { ...newcomer, pid: newcomer.pid + 1 });
      expect(readFileSync(path, 'utf8').split(' ')[0]).to.equal(String(newcomer.pid + 1));
    });
  });

  it("judges another host's lock (a new container on the volume) and an empty one by heartbeat: refused while fresh, taken once stale", () => {
    for (const text of [line({ ...self, host: 'old-container' }), '']) {
      writeFileSync(path, text);
      setAge(STALE_MS - 500);
      expect(() => lockDir(nodeFs, dir, STALE_MS, newcomer), text).to.throw(/whose heartbeat is younger than LOCK_STALE_MS \(2000 ms\)/);
      expect(readFileSync(path, 'utf8')).to.equal(text);
      setAge(STALE_MS + 1);
      lockDir(nodeFs, dir, STALE_MS, newcomer);
      taken();
      rmSync(path);
    }
  });

  it('waits for a quiet heartbeat to go stale, then starts, nothing deleted by anyone', async () => {
    writeFileSync(path, line({ ...self, host: 'old-container', pid: 1 }));
    const lines: string[] = [];
    const started = Date.now();
    await awaitStaleLock(dir, STALE_MS, (l) => lines.push(l), newcomer);
    const waited = Date.now() - started;
    expect(waited).to.be.within(STALE_MS - 300, STALE_MS + 500);
    expect(lines.join('\n')).to.match(/names process 1 on host old-container, heartbeat \d+ ms ago: waiting up to 2000 ms/);
    lockDir(nodeFs, dir, STALE_MS, newcomer);
    taken();
  });

  it('stops waiting as soon as the heartbeat moves, and then refuses', async () => {
    writeFileSync(path, line({ ...self, host: 'other-host' }));
    const beating = setInterval(() => utimesSync(path, Date.now() / 1000, Date.now() / 1000), 300);
    try {
      const started = Date.now();
      await awaitStaleLock(dir, STALE_MS, () => {}, newcomer);
      expect(Date.now() - started).to.be.below(1000);
      expect(() => lockDir(nodeFs, dir, STALE_MS, newcomer)).to.throw(/in use by process \d+ on host other-host, whose heartbeat/);
    } finally {
      clearInterval(beating);
    }
  });

  it("beats while held: the lock's mtime stays fresh; a lock taken by another is reported lost", async () => {
    lockDir(nodeFs, dir, STALE_MS, newcomer);
    setAge(STALE_MS);
    await sleep(STALE_MS / 3 + 200);
    expect(Date.now() - statSync(path).mtimeMs).to.be.below(STALE_MS / 3 + 200);

    const lost: string[] = [];
    const before = onDirLockLost((message) => lost.push(message));
    try {
      writeFileSync(path, line({ ...self, host: 'usurper' }));
      await sleep(STALE_MS / 3 + 200);
      expect(lost).to.have.length(1);
      expect(lost[0]).to.match(/was taken by process \d+ on host usurper/);
    } finally {
      onDirLockLost(before);
    }
  });

  it('makes its lock again when it is deleted by hand while held', async () => {
    lockDir(nodeFs, dir, STALE_MS, newcomer);
    rmSync(path);
    await sleep(STALE_MS / 3 + 200);
    expect(existsSync(path)).to.equal(true);
    taken();
  });
});
