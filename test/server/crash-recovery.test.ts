// Kill the server with SIGKILL in the middle of a stream of add-many calls,
// restart it on the same DATA_DIR: every acknowledged write is there, exactly,
// and every batch that was not acknowledged is there whole or not at all;
// with FSYNC=always as with the default.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerProcess, startSourceServer } from '../../bench/lib/spawn-server.js';

const WRITERS = 4;
const BATCH = 400;
const DIM = 32;

interface Batch {
  ids: string[];
  vectors: number[][];
  acknowledged: boolean;
}

function makeBatch(writer: number, n: number): { ids: string[]; body: unknown; vectors: number[][] } {
  const ids: string[] = [];
  const vectors: number[][] = [];
  const records = [];
  for (let i = 0; i < BATCH; i++) {
    const id = `w${writer}-b${n}-${i}`;
    // Multiples of 1/8: exact in float32, so they read back equal.
    const vector = Array.from({ length: DIM }, (_, j) => ((writer * 31 + n * 7 + i * 3 + j) % 97) / 8 - 6);
    ids.push(id);
    vectors.push(vector);
    records.push({ id, vector, metadata: { writer, batch: n, i } });
  }
  return { ids, vectors, body: { vectors: records, metric: 'l2' } };
}

for (const fsync of ['never', 'always'])
  describe(`SIGKILL in the middle of add-many, then restart (FSYNC=${fsync})`, function () {
    this.timeout(60_000);
    let dir: string;
    let server: ServerProcess | undefined;

    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'tempvec-crash-'));
    });
    afterEach(() => {
      server?.child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    });

    it('keeps every acknowledged batch and no half batch', async () => {
      server = await startSourceServer({ DATA_DIR: dir, FSYNC: fsync });
      const { url } = server;
      const token = (await (await fetch(`${url}/token`, { method: 'POST' })).json()).token as string;
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const batches: Batch[] = [];
      let acknowledged = 0;
      let killed = false;

      async function writer(w: number) {
        for (let n = 0; !killed; n++) {
          const { ids, vectors, body } = makeBatch(w, n);
          const batch: Batch = { ids, vectors, acknowledged: false };
          batches.push(batch);
          try {
            const res = await fetch(`${url}/vectors/add-many`, { method: 'POST', headers, body: JSON.stringify(body) });
            const json = await res.json();
            if (res.status === 200 && json.mutation.added === BATCH) {
              batch.acknowledged = true;
              acknowledged++;
            }
          } catch {
            return; // the server is gone: this batch was not acknowledged
          }
        }
      }

      const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
      while (acknowledged < 12) await new Promise((r) => setTimeout(r, 5));
      killed = true;
      server.child.kill('SIGKILL');
      expect(await server.exited).to.equal('SIGKILL');
      await Promise.all(writers);
      const unacknowledged = batches.filter((b) => !b.acknowledged).length;

      server = await startSourceServer({ DATA_DIR: dir, FSYNC: fsync });
      let present = 0;
      let wholeUnacknowledged = 0;
      for (const batch of batches) {
        const res = await fetch(`${server.url}/vectors/get-many`, { method: 'POST', headers, body: JSON.stringify({ ids: batch.ids }) });
        expect(res.status).to.equal(200);
        const { vectors, notFound } = await res.json();
        if (batch.acknowledged) expect(notFound, 'an acknowledged batch lost vectors').to.deep.equal([]);
        expect([0, BATCH], 'a batch is stored whole or not at all').to.include(vectors.length);
        vectors.forEach((stored: { id: string; vector: number[]; metadata: { i: number } }, k: number) => {
          expect(stored.id).to.equal(batch.ids[k]);
          expect(stored.vector).to.deep.equal(batch.vectors[k]);
          expect(stored.metadata.i).to.equal(k);
        });
        present += vectors.length;
        if (!batch.acknowledged && vectors.length > 0) wholeUnacknowledged++;
      }
      const session = await (await fetch(`${server.url}/session`, { headers })).json();
      expect(session.session.vectorCount).to.equal(present);
      expect(present).to.be.at.least(acknowledged * BATCH);
      // What the run exercised, for whoever reads the log.
      console.log(`      ${acknowledged} batches acknowledged, ${unacknowledged} in flight at the kill (${wholeUnacknowledged} of them had reached the log)`);
    });
  });
