// npm run bench:experiment -- <name> [args]: one experiment of
// bench/experiments/<name>.ts in its own process; no name lists them.
// Experiments probe a question once (a flag, a loop shape, another build);
// their findings are in docs/experiments/ (one file each).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const dir = new URL('./', import.meta.url);
const names = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .map((f) => f.slice(0, -3))
  .sort();
const [name, ...args] = process.argv.slice(2);
if (!name || !names.includes(name)) {
  console.error(`usage: npm run bench:experiment -- <name> [args]; experiments: ${names.join(', ')}`);
  process.exit(name ? 1 : 0);
}
const run = spawnSync(process.execPath, ['--import', 'tsx', new URL(`${name}.ts`, dir).pathname, ...args], { stdio: 'inherit' });
process.exit(run.status ?? 1);
