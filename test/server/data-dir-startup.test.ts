// An unusable DATA_DIR stops the server at start-up with a one-line message
// and exit code 1, instead of a server whose every POST /token is 503.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

async function startWith(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT, env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const [code] = await once(child, 'exit');
  clearTimeout(timer);
  return { code, output };
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
});
