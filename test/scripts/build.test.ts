// scripts/build.ts: npm start and npm test run a build step only when it is
// stale. Driven on a scratch repository whose one step counts its runs.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type BuildStep, STEPS } from '../../scripts/build.js';

describe('scripts/build.ts (the one build)', function () {
  this.timeout(60_000);
  const step: BuildStep = { name: 'kernel', inputs: ['in'], outputs: ['out/made.txt'] };
  let root: string;
  const runs = () => readFileSync(join(root, 'runs.txt'), 'utf8').length;
  const run = (force = false) => build(undefined, { root, steps: [step], force, log: () => {} });
  const script = (fail: boolean) => ({
    scripts: {
      'build:kernel': `node -e "const fs = require('fs'); fs.appendFileSync('runs.txt', 'x'); fs.mkdirSync('out', { recursive: true }); fs.writeFileSync('out/made.txt', 'ok'); process.exit(${fail ? 1 : 0})"`,
    },
  });

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'tempvec-build-'));
    mkdirSync(join(root, 'in'));
    writeFileSync(join(root, 'in/a.ts'), 'one');
    writeFileSync(join(root, 'runs.txt'), '');
    writeFileSync(join(root, 'package.json'), JSON.stringify(script(false)));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('builds once on a fresh tree, then not again while nothing changed (a newer mtime alone is no change)', () => {
    run();
    run();
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'in/a.ts'), later, later);
    run();
    expect(runs()).to.equal(1);
  });

  it('builds again when an input changes, is added, or an output is gone', () => {
    run();
    writeFileSync(join(root, 'in/a.ts'), 'two');
    run();
    writeFileSync(join(root, 'in/b.ts'), 'new');
    run();
    rmSync(join(root, 'out/made.txt'));
    run();
    expect(runs()).to.equal(4);
  });

  it('builds again when its command changes, or when forced', () => {
    run();
    writeFileSync(join(root, 'package.json'), JSON.stringify(script(false)).replace('runs.txt', './runs.txt'));
    run();
    run(true);
    expect(runs()).to.equal(3);
  });

  it('throws when the step fails, and runs it again next time', () => {
    writeFileSync(join(root, 'package.json'), JSON.stringify(script(true)));
    expect(run).to.throw(/build:kernel failed/);
    expect(run).to.throw(/build:kernel failed/);
    expect(runs()).to.equal(2);
  });

  it('skips an excluded folder of its inputs: a change there leaves the step fresh', () => {
    const excluding: BuildStep = { ...step, excludes: ['in/other'] };
    mkdirSync(join(root, 'in/other'));
    const runExcluding = () => build(undefined, { root, steps: [excluding], log: () => {} });
    runExcluding();
    writeFileSync(join(root, 'in/other/x.ts'), 'another step builds this');
    runExcluding();
    writeFileSync(join(root, 'in/a.ts'), 'two');
    runExcluding();
    expect(runs()).to.equal(2);
  });

  it('the search kernel does not read the embedding kernel, which has a step of its own', () => {
    expect(STEPS.find((s) => s.name === 'kernel')!.excludes).to.deep.equal(['assembly/embedding']);
    expect(STEPS.find((s) => s.name === 'embedding')!.inputs).to.include('assembly/embedding');
  });

  it('the kernel step does not read src/, so a change there rebuilds the SDK and server only', () => {
    const kernel = STEPS.find((s) => s.name === 'kernel')!;
    expect(kernel.inputs).not.to.include('src');
    for (const name of ['sdk', 'server']) expect(STEPS.find((s) => s.name === name)!.inputs).to.include('src');
  });
});
