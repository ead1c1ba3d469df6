// npm run test:fast [-- mocha args]: the contributor's loop. Rebuilds only
// the parts whose sources changed since their build (npm test always
// rebuilds), then runs mocha with the slow randomized suites cut to
// TEST_SCALE of their cases (default 0.2 here; npm test runs them whole).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../', import.meta.url).pathname;

/** Each build step: the npm script, what it reads, what it writes. */
const STEPS = [
  { script: 'build:kernel', inputs: ['assembly', 'asconfig.json'], outputs: ['build/kernel.wasm', 'build/kernel.shared.wasm', 'build/kernel.bench.wasm'] },
  { script: 'build:sdk', inputs: ['src', 'package.json'], outputs: ['build/sdk.js', 'build/sdk.d.ts'] },
  { script: 'build:server', inputs: ['src', 'tsconfig.json'], outputs: ['dist/server.js'] },
];

/** Newest modification time of a file, or of any file under a folder. */
function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

/** A step is stale when an output is missing or older than its newest input. */
export function isStale(step: (typeof STEPS)[number]): boolean {
  const outputs = step.outputs.map((p) => join(root, p));
  if (!outputs.every((p) => existsSync(p))) return true;
  const built = Math.min(...outputs.map((p) => statSync(p).mtimeMs));
  return step.inputs.some((p) => newest(join(root, p)) > built);
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
for (const step of STEPS) {
  if (!isStale(step)) continue;
  console.log(`test:fast: ${step.script} (sources changed)`);
  const run = spawnSync(npm, ['run', '--silent', step.script], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
const env = { ...process.env, TEST_SCALE: process.env.TEST_SCALE ?? '0.2' };
const mocha = spawnSync(process.execPath, [join(root, 'node_modules/mocha/bin/mocha.js'), ...process.argv.slice(2)], { cwd: root, stdio: 'inherit', env });
process.exit(mocha.status ?? 1);
