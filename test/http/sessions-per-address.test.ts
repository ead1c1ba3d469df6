// MAX_SESSIONS_PER_ADDRESS: POST /token from an address holding that many live
// sessions is 429 TOO_MANY_SESSIONS and creates nothing; IPv6 addresses count
// by their /64 and IPv4-mapped ones as IPv4; an expired session frees its
// place; with DATA_DIR the sessions on disk, not reopened since a restart,
// still count (the addresses file beside the logs keeps hashes, not addresses).
import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADDRESSES_FILE } from '../../src/sessions/session-addresses.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';

const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });
const MAX = 3;
const TTL = 60_000;

describe('live sessions per client address', () => {
  let now = Date.now();
  const clock = () => now;
  const apps: LiveApp[] = [];
  const dirs: string[] = [];
  async function start(overrides: Record<string, unknown> = {}) {
    const live = await startApp({ trustProxy: 1, tokenRatePerMin: 0, maxSessionsPerAddress: MAX, sessionTtlMs: TTL, ...overrides }, { now: clock });
    apps.push(live);
    return live;
  }
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'tempvec-addresses-'));
    dirs.push(dir);
    return dir;
  };

  async function tokens(live: LiveApp, address: string, n: number): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await live.send('POST', '/token', from(address));
      expect(res.status, `${address} #${i + 1}: ${res.text}`).to.equal(201);
      out.push(res.body.token);
    }
    return out;
  }

  async function expectRefused(live: LiveApp, address: string) {
    const size = live.store.size;
    const res = await live.send('POST', '/token', from(address));
    expect(res.status, res.text).to.equal(429);
    expect(res.body.error.code).to.equal('TOO_MANY_SESSIONS');
    expect(res.body.error.details).to.deep.equal({ maxSessionsPerAddress: MAX });
    expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
    // Nothing was created.
    expect(live.store.size).to.equal(size);
  }

  it('takes MAX_SESSIONS_PER_ADDRESS sessions from one address and refuses the next; other addresses pass', async () => {
    const live = await start();
    await tokens(live, '203.0.113.7', MAX);
    await expectRefused(live, '203.0.113.7');
    // Written IPv4-mapped, the same address.
    await expectRefused(live, '::ffff:203.0.113.7');
    await tokens(live, '203.0.113.8', MAX);
    const limits = (await live.send('GET', '/limits')).body.limits;
    expect(limits.admission.maxSessionsPerAddress).to.equal(MAX);
  });

  it('counts IPv6 addresses by their /64', async () => {
    const live = await start();
    await tokens(live, '2001:db8:1:2::1', 1);
    await tokens(live, '2001:db8:1:2:ffff:ffff:ffff:fffe', 1);
    await tokens(live, '2001:0db8:0001:0002:0:0:0:9', 1);
    await expectRefused(live, '2001:db8:1:2:abcd::42');
    // The next /64 is another customer.
    await tokens(live, '2001:db8:1:3::1', MAX);
  });

  it('frees a place when a session expires', async () => {
    const live = await start();
    const [, second, third] = await tokens(live, '198.51.100.1', MAX);
    await expectRefused(live, '198.51.100.1');
    // Two of them stay in use; the first goes idle past the TTL.
    now += TTL / 2;
    for (const token of [second, third]) expect((await live.send('GET', '/session', { token })).status).to.equal(200);
    now += TTL / 2 + 1;
    await tokens(live, '198.51.100.1', 1);
    await expectRefused(live, '198.51.100.1');
  });

  it('0 turns it off', async () => {
    const live = await start({ maxSessionsPerAddress: 0 });
    await tokens(live, '192.0.2.1', MAX + 2);
  });

  it('with DATA_DIR, counts the sessions on disk after a restart, and keeps no address in the file', async () => {
    const dataDir = tempDir();
    let live = await start({ dataDir });
    const held = await tokens(live, '203.0.113.9', MAX);
    await live.close();
    const text = readFileSync(join(dataDir, ADDRESSES_FILE), 'utf8');
    expect(text.trim().split('\n')).to.have.length(MAX);
    expect(text).to.not.include('203.0.113');

    live = await start({ dataDir });
    // All three are on disk, none reopened: still counted.
    await expectRefused(live, '203.0.113.9');
    // Reopened by a request, still one session.
    expect((await live.send('GET', '/session', { token: held[0] })).status).to.equal(200);
    await expectRefused(live, '203.0.113.9');
    await tokens(live, '203.0.113.10', 1);

    // Past the TTL the dormant ones expire (their files go) and free their places.
    now += TTL + 1;
    await tokens(live, '203.0.113.9', MAX);
  });

  it('with DATA_DIR, starts on logs written before the addresses file (they count for no address)', async () => {
    const dataDir = tempDir();
    let live = await start({ dataDir });
    await tokens(live, '203.0.113.11', MAX);
    await live.close();
    rmSync(join(dataDir, ADDRESSES_FILE));
    live = await start({ dataDir });
    expect(live.store.size).to.equal(MAX);
    await tokens(live, '203.0.113.11', MAX);
    // A damaged line is skipped.
    await live.close();
    writeFileSync(join(dataDir, ADDRESSES_FILE), 'not a line\n', { flag: 'a' });
    live = await start({ dataDir });
    await expectRefused(live, '203.0.113.11');
    expect(existsSync(join(dataDir, `${ADDRESSES_FILE}.tmp`))).to.equal(false);
  });
});
