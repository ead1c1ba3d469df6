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

/** A small session's count (its own objects, its indexes', what it stores) may be this far below the measured cost. */
const SESSION_LOW = 0.95;
const SESSION_HIGH = 1.5;

describe('memory budget under churn', function () {
  this.timeout(600_000);
  let data: Growth;
  let sessions: { measured: number; counted: number };
  before(async () => {
    const script = new URL('../helpers/churn-growth.ts', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--no-flush-bytecode', '--import', 'tsx', script], { maxBuffer: 1 << 20 });
    ({ data, sessions } = JSON.parse(stdout.trim().split('\n').pop()!));
  });

  it(`counts what replaces, deletes, metadata set and patch, clears and resets keep, within ${TOLERANCE * 100}% of the measured growth`, () => {
    // Linear memories are WebAssembly memories, not ArrayBuffers of the allocator: counted exactly, outside this comparison.
    const counted = data.heapBytes + data.metadataBytes;
    const measured = data.heapUsed + data.arrayBuffers;
    expect(counted, JSON.stringify(data)).to.be.greaterThan(1_000_000);
    expect(Math.abs(measured - counted), `counted ${counted}, measured ${measured}: ${JSON.stringify(data)}`).to.be.at.most(TOLERANCE * counted);
  });

  it(`counts a small session (one vector with metadata and text) at ${SESSION_LOW}x to ${SESSION_HIGH}x of what it takes`, () => {
    expect(sessions.counted / sessions.measured, JSON.stringify(sessions)).to.be.within(SESSION_LOW, SESSION_HIGH);
  });
});
