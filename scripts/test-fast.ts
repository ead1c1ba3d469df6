// npm run test:fast [-- mocha args]: the contributor's loop. Rebuilds only
// the stale parts (scripts/build.ts, as npm start and npm test do), skips
// npm test's type-check and lint (npm run typecheck, npm run lint), then runs
// mocha with the slow randomized suites cut to TEST_SCALE of their cases
// (default 0.2 here; npm test runs them whole).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { build } from './build.js';

const root = new URL('../', import.meta.url).pathname;

try {
  build();
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
const env = { ...process.env, TEST_SCALE: process.env.TEST_SCALE ?? '0.2' };
const mocha = spawnSync(process.execPath, [join(root, 'node_modules/mocha/bin/mocha.js'), ...process.argv.slice(2)], { cwd: root, stdio: 'inherit', env });
process.exit(mocha.status ?? 1);
