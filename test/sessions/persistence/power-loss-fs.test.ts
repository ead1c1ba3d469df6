// The harness's own file system: what it keeps and what it may lose at a
// power loss, checked over many seeds, so a pass of the power-loss harness
// means what docs/operations.md says it does.
import { expect } from 'chai';
import { PAGE_BYTES, PowerLossFs } from '../../helpers/power-loss-fs.js';
import { seededRng } from '../../helpers/random.js';

const DIR = '/d';
const bytes = (n: number, fill: number) => Buffer.alloc(n, fill);

describe('PowerLossFs', () => {
  it('keeps every fsynced byte through a power loss, whatever was written after it', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const fs = new PowerLossFs(DIR, seededRng(seed));
      const fd = fs.openSync(`${DIR}/f`, 'wx');
      fs.writeSync(fd, bytes(700, 1), 0, 700, 0);
      fs.fsyncSync(fd);
      const dir = fs.openSync(DIR, 'r');
      fs.fsyncSync(dir);
      fs.writeSync(fd, bytes(1500, 2), 0, 1500, 700); // shares a sector with the synced bytes
      fs.crash();
      const after = fs.image!.get('f')!;
      expect(after.subarray(0, 700).equals(bytes(700, 1)), `seed ${seed}`).to.equal(true);
      expect(
        after.subarray(700).every((b) => b === 0 || b === 2),
        `seed ${seed}`,
      ).to.equal(true);
    }
  });

  it('loses unsynced sectors independently: some later ones survive an earlier one lost', () => {
    let outOfOrder = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const fs = new PowerLossFs(DIR, seededRng(seed), new Map([['f', Buffer.alloc(0)]]));
      const fd = fs.openSync(`${DIR}/f`, 'r+');
      fs.writeSync(fd, bytes(PAGE_BYTES * 4, 7), 0, PAGE_BYTES * 4, 0);
      fs.crash();
      const after = fs.image!.get('f')!;
      const sectors = Array.from({ length: 4 }, (_, i) => after.length >= (i + 1) * PAGE_BYTES && after[(i + 1) * PAGE_BYTES - 1] === 7);
      if (!sectors[0] && sectors.slice(1).some(Boolean)) outOfOrder++;
    }
    expect(outOfOrder).to.be.above(5);
  });

  it('after a failed fsync, reads still return what the disk may never hold (Linux)', () => {
    let lost = 0;
    for (let seed = 1; seed <= 100; seed++) {
      const fs = new PowerLossFs(DIR, seededRng(seed), new Map([['f', Buffer.alloc(0)]]));
      fs.failSyncAt = 1;
      const fd = fs.openSync(`${DIR}/f`, 'r+');
      fs.writeSync(fd, bytes(PAGE_BYTES * 4, 9), 0, PAGE_BYTES * 4, 0);
      expect(() => fs.fsyncSync(fd)).to.throw(/EIO/);
      fs.fsyncSync(fd); // succeeds, and writes nothing more: the pages were marked clean
      const read = Buffer.alloc(PAGE_BYTES * 4);
      fs.readSync(fd, read, 0, read.length, 0);
      expect(read.equals(bytes(PAGE_BYTES * 4, 9))).to.equal(true);
      fs.crash();
      if (!fs.image!.get('f')!.equals(bytes(PAGE_BYTES * 4, 9))) lost++;
    }
    expect(lost).to.be.above(50);
  });

  it('keeps a prefix of the directory changes made since the last directory fsync', () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 100; seed++) {
      const fs = new PowerLossFs(DIR, seededRng(seed), new Map([['log', bytes(10, 1)]]));
      const fd = fs.openSync(`${DIR}/log.tmp`, 'w');
      fs.writeSync(fd, bytes(10, 2), 0, 10, 0);
      fs.fsyncSync(fd);
      fs.renameSync(`${DIR}/log.tmp`, `${DIR}/log`);
      fs.crash();
      const names = [...fs.image!.keys()].sort().join(',');
      const log = fs.image!.get('log')![0];
      seen.add(`${names}:${log}`);
    }
    // Nothing survived (the old log), the create only, or create and rename (the new log).
    expect([...seen].sort()).to.deep.equal(['log,log.tmp:1', 'log:1', 'log:2']);
  });
});
