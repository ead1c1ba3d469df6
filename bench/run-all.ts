// npm run bench: every user-facing bench/*.bench.ts in turn, each in its own
// process (so one scenario's heap and memory do not skew the next).
// Arguments such as --quick are passed on. Experiments (bench/experiments/)
// are not run here: npm run bench:experiment -- <name>.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const dir = new URL('./', import.meta.url);
const order = ['kernel', 'peers', 'scan', 'single', 'filter', 'int8', 'ingest', 'http', 'memory'];
const rank = (f: string) => {
  const i = order.indexOf(f.replace('.bench.ts', ''));
  return i < 0 ? order.length : i;
};
const scripts = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
let failed = 0;
for (const script of scripts) {
  console.log(`\n== ${script}`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', new URL(script, dir).pathname, ...process.argv.slice(2)], { stdio: 'inherit' });
  if (run.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
