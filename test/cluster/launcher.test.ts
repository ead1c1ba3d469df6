// npm run cluster's command line (dist/cluster/main.js): SIGTERM drains every
// instance and stops nginx; without nginx it says how to install it; with
// --upstreams it writes a configuration nginx accepts.
import { expect } from 'chai';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startScriptNodeFlags } from '../../bench/lib/child-server.js';
import { startCluster } from '../helpers/cluster.js';
import { expectError, expectOk } from '../helpers/http.js';
import { DIST_SERVER, findNginx, freePort, kernelThreadsPerInstance } from '../../src/cluster/launcher.js';
import { procStat } from '../../src/sessions/persistence/dir-lock.js';

const MAIN = fileURLToPath(new URL('../../dist/cluster/main.js', import.meta.url));

describe('npm run cluster (the launcher command)', function () {
  this.timeout(60_000);

  it('drains every instance and stops nginx on SIGTERM, exiting 0', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [MAIN, '--instances', '2', '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = once(child, 'exit');
    try {
      const deadline = Date.now() + 30_000;
      while (!/cluster listening on (http:\S+)/.test(output)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the cluster did not start:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const url = /cluster listening on (http:\S+)/.exec(output)![1];
      const prefix = /nginx in ([^)]+)\)/.exec(output)![1];
      expect(url).to.equal(`http://127.0.0.1:${port}`);
      const token = await fetch(`${url}/token`, { method: 'POST' }).then((r) => r.json());
      expect(token.token).to.match(/^i[12]\./);
      expect(existsSync(prefix)).to.equal(true);

      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code, output).to.equal(0);
      for (const id of ['i1', 'i2']) expect(output).to.include(`[${id}] SIGTERM: finishing requests in flight`);
      expect(existsSync(prefix), 'nginx prefix removed').to.equal(false);
      const after = await fetch(`${url}/healthz`).then(
        () => 'answered',
        () => 'refused',
      );
      expect(after).to.equal('refused');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('runs instances as npm start does, dividing the cores among them', () => {
    expect(DIST_SERVER.nodeArgs).to.deep.equal(startScriptNodeFlags());
    expect([1, 2, 3, 4, 8].map((k) => kernelThreadsPerInstance(k, 8))).to.deep.equal([8, 4, 2, 2, 1]);
    expect(kernelThreadsPerInstance(3, 2)).to.equal(1);
  });

  it('restarts an instance that died on its own, and its sessions answer again from DATA_DIR', async () => {
    const c = await startCluster(1, {}, 200);
    try {
      const token = await c.token();
      expectOk(await c.request('POST', '/vectors/add', { token, body: { id: 'kept', vector: [1, 2] } }));
      const { pid } = c.cluster.instances[0].child!;
      process.kill(pid!, 'SIGKILL');
      const deadline = Date.now() + 30_000;
      let res = await c.request('POST', '/vectors/get', { token, body: { id: 'kept' } });
      while (res.status !== 200 && Date.now() < deadline) {
        expectError(res, 503, 'INSTANCE_UNAVAILABLE');
        await new Promise((resolve) => setTimeout(resolve, 100));
        res = await c.request('POST', '/vectors/get', { token, body: { id: 'kept' } });
      }
      expect(expectOk(res).vector.vector).to.deep.equal([1, 2]);
      expect(c.cluster.instances[0].child!.pid).to.not.equal(pid);
      expect(c.log.join('\n')).to.match(/instance i1 exited \(SIGKILL\); restarting in 200 ms/);
    } finally {
      await c.close();
    }
  });

  it('says how to install nginx and exits non-zero where it is missing', () => {
    const run = spawnSync(process.execPath, [MAIN, '--instances', '1', '--nginx', '/nonexistent/nginx'], { encoding: 'utf8' });
    expect(run.status).to.equal(1);
    expect(run.stderr).to.include('apt-get install nginx');
  });

  it('writes an nginx configuration for instances on other machines that nginx -t accepts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tempvec-upstreams-'));
    try {
      const snippet = join(dir, 'tempvec.conf');
      const run = spawnSync(
        process.execPath,
        [MAIN, '--upstreams', 'east1=10.0.0.1:3000,west2=[::1]:3001', '--port', '8080', '--host', '0.0.0.0', '--out', snippet],
        {
          encoding: 'utf8',
          env: { ...process.env, MAX_BODY_BYTES: '1234567' },
        },
      );
      expect(run.status, run.stderr).to.equal(0);
      const text = readFileSync(snippet, 'utf8');
      expect(text).to.include('server 10.0.0.1:3000;').and.include('server [::1]:3001;').and.include('client_max_body_size 1234567;');
      expect(text).to.include('"~^[Bb][Ee][Aa][Rr][Ee][Rr] east1\\." tempvec_east1;').and.include('listen 0.0.0.0:8080;');
      const nginx = findNginx();
      if (!nginx) throw new Error('nginx is not installed: apt-get install nginx');
      const main = join(dir, 'nginx.conf');
      writeFileSync(
        main,
        `pid ${dir}/nginx.pid;\nevents {}\nhttp {\n${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${dir}/${t};`).join('\n')}\ninclude ${snippet};\n}\n`,
      );
      const test = spawnSync(nginx, ['-t', '-p', dir, '-c', main, '-e', join(dir, 'error.log')], { encoding: 'utf8' });
      expect(test.status, test.stderr).to.equal(0);

      const bad = spawnSync(process.execPath, [MAIN, '--upstreams', 'East=10.0.0.1:3000'], { encoding: 'utf8' });
      expect(bad.status).to.equal(1);
      expect(bad.stderr).to.include('lowercase letters or digits');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("applies nginx's protections live: bodies reach the instance unbuffered, requests per address capped with a JSON 429", async () => {
    const c = await startCluster(1, {}, 0, { connections: 4, requestsPerSec: 5 });
    try {
      // A 3 MB body announced with a token no instance knows: the instance answers 401 while the
      // body is still on its way (a buffering proxy would first wait for all of it).
      const { port } = new URL(c.cluster.url);
      const socket = connect(Number(port), '127.0.0.1');
      await once(socket, 'connect');
      socket.write(
        `POST /vectors/add HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer i1.nope\r\nContent-Type: application/json\r\nContent-Length: 3000000\r\n\r\n{"id":"`,
      );
      const [head] = (await once(socket, 'data')) as [Buffer];
      expect(String(head)).to.match(/^HTTP\/1\.1 401 /);
      socket.destroy();

      // 5 a second with a burst of 10: 30 at once from one address get 429 from nginx, in the service's shape.
      const answers = await Promise.all(Array.from({ length: 30 }, () => c.request('GET', '/limits')));
      const limited = answers.filter((r) => r.status === 429);
      expect(limited.length).to.be.at.least(10);
      expectError(limited[0], 429, 'RATE_LIMITED');
      expect(limited[0].headers.get('retry-after')).to.equal('1');
      expect(limited[0].headers.get('x-tempvec-instance'), 'answered by nginx').to.equal(null);
    } finally {
      await c.close();
    }
  });

  it('ends its instances and nginx when the launcher is SIGKILLed', async () => {
    const child = spawn(process.execPath, [MAIN, '--instances', '1', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const deadline = Date.now() + 30_000;
    while (!/cluster listening on/.test(output)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the cluster did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const children = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(child.pid)], { encoding: 'utf8' })
      .trim()
      .split('\n');
    const instance = Number(
      children
        .find((line) => line.includes('dist/server.js'))!
        .trim()
        .split(' ')[0],
    );
    child.kill('SIGKILL');
    await once(child, 'exit');
    const until = Date.now() + 15_000;
    while (procStat(instance) && procStat(instance)?.state !== 'Z' && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    const state = procStat(instance)?.state ?? 'gone';
    if (state !== 'gone' && state !== 'Z') process.kill(instance, 'SIGKILL');
    expect(state, 'the orphaned instance exits').to.be.oneOf(['gone', 'Z']);
  });
});
