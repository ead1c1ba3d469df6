// scripts/build.ts: npm start and npm test rebuild only what is stale.
import { expect } from 'chai';
import { fingerprint, isStale, STEPS } from '../../scripts/build.js';

describe('scripts/build.ts (the one build)', () => {
  it('finds nothing stale right after the build that npm test ran', () => {
    for (const step of STEPS) expect(isStale(step), step.name).to.equal(false);
  });

  it('fingerprints a step by its inputs and command, so the kernel does not depend on src', () => {
    const [kernel, sdk, server] = ['kernel', 'sdk', 'server'].map((name) => STEPS.find((s) => s.name === name)!);
    expect(kernel.inputs).not.to.include('src');
    expect(fingerprint(sdk)).not.to.equal(fingerprint(server));
    expect(fingerprint(kernel)).to.equal(fingerprint(kernel));
  });
});
