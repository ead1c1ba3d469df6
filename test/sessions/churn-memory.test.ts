// Every byte a session's writes make the server keep is counted in the memory
// budget: a child process (--expose-gc) churns sessions over HTTP (replace,
// delete, metadata set and patch, clear, reset, with texts and metadata) and
// compares what the budget counts as stored with the measured growth of the
// JS heap and the ArrayBuffers (test/helpers/churn-growth.ts).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';

/** Counted and measured growth may differ by this fraction of the counted. */
const TOLERANCE = 0.1;

interface Growth {
  measured: number;
  heapUsed: number;
  arrayBuffers: number;
  counted: number;
  heapBytes: number;
  metadataBytes: number;
  linearMemoryBytes: number;
}

describe('memory budget under churn', function () {
  this.timeout(600_000);

  it(`counts what replaces, deletes, metadata set and patch, clears and resets keep, within ${TOLERANCE * 100}% of the measured growth`, async () => {
    const script = new URL('../helpers/churn-growth.ts', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', script], { maxBuffer: 1 << 20 });
    const { data } = JSON.parse(stdout.trim().split('\n').pop()!) as { data: Growth };
    // Linear memories are WebAssembly memories, not ArrayBuffers of the allocator: counted exactly, outside this comparison.
    const counted = data.heapBytes + data.metadataBytes;
    const measured = data.heapUsed + data.arrayBuffers;
    expect(counted, JSON.stringify(data)).to.be.greaterThan(1_000_000);
    expect(Math.abs(measured - counted), `counted ${counted}, measured ${measured}: ${JSON.stringify(data)}`).to.be.at.most(TOLERANCE * counted);
  });
});
