// The one build, for npm start, npm test, npm run test:fast, npm run cluster
// and the benches' child server: runs each build step (package.json's
// build:kernel, build:sdk, build:server) only when it is stale, that is when an
// output is missing or its inputs or command differ from those of its last
// successful run (a SHA-256 of them kept in build/.stamps/). A fresh clone
// builds everything once; a restart on an unchanged tree builds nothing.
//
//   node --import tsx scripts/build.ts             the stale steps
//   node --import tsx scripts/build.ts --force     every step
//   node --import tsx scripts/build.ts server ...  only the steps named
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = new URL('../', import.meta.url).pathname;
/** Where the fingerprint of each step's last successful run is kept, under the root. */
const STAMPS = 'build/.stamps';

export interface BuildStep {
  /** Short name; the npm script is `build:<name>`. */
  name: string;
  /** Files and folders (from the repository root) the step reads. */
  inputs: string[];
  /** Files it writes; any one missing makes the step stale. */
  outputs: string[];
  /** Folders under its inputs that another step builds (their changes leave this one fresh). */
  excludes?: string[];
}

/** In the order they run (nothing depends on another's output, but the kernel is the slowest to fail). */
export const STEPS: readonly BuildStep[] = [
  {
    name: 'kernel',
    inputs: ['assembly', 'asconfig.json', 'package-lock.json'],
    excludes: ['assembly/embedding'],
    outputs: [
      'build/kernel.wasm',
      'build/kernel.d.ts',
      'build/kernel.shared.wasm',
      'build/kernel.relaxed.wasm',
      'build/kernel.relaxed.shared.wasm',
      'build/kernel.bench.wasm',
    ],
  },
  { name: 'embedding', inputs: ['assembly/embedding', 'package-lock.json'], outputs: ['build/embedding.wasm'] },
  { name: 'sdk', inputs: ['src', 'package-lock.json'], outputs: ['build/sdk.js', 'build/sdk.d.ts'] },
  { name: 'server', inputs: ['src', 'tsconfig.json', 'package-lock.json'], outputs: ['dist/server.js', 'dist/start.js'] },
  // The demo's text sample: the docs' prose, not their screenshots.
  {
    name: 'demo',
    inputs: ['README.md', 'docs', 'scripts/demo-passages.ts'],
    excludes: ['docs/demo.png', 'docs/demo-text.png', 'docs/experiments'],
    outputs: ['build/demo-passages.json'],
  },
];

/** Every file under `path` (or `path` itself) outside `excludes`, sorted, as paths from the root. */
function files(root: string, path: string, excludes: readonly string[] = []): string[] {
  const full = join(root, path);
  if (!existsSync(full) || excludes.includes(path)) return [];
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full)
    .sort()
    .flatMap((name) => files(root, join(path, name), excludes));
}

/** The npm script a step runs. */
function command(step: BuildStep, root: string): string {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const script = scripts[`build:${step.name}`];
  if (script === undefined) throw new Error(`package.json has no script build:${step.name}`);
  return script;
}

/** SHA-256 of a step's command and of the names and contents of its inputs. */
export function fingerprint(step: BuildStep, root = ROOT): string {
  const hash = createHash('sha256').update(command(step, root)).update('\0');
  for (const input of step.inputs) {
    for (const file of files(root, input, step.excludes))
      hash
        .update(file)
        .update('\0')
        .update(readFileSync(join(root, file)))
        .update('\0');
  }
  return hash.digest('hex');
}

const stampPath = (step: BuildStep, root: string) => join(root, STAMPS, step.name);

/** Stale: an output is missing, or the inputs are not those of the last successful run. */
export function isStale(step: BuildStep, root = ROOT): boolean {
  if (!step.outputs.every((p) => existsSync(join(root, p)))) return true;
  const stamp = stampPath(step, root);
  return !existsSync(stamp) || readFileSync(stamp, 'utf8') !== fingerprint(step, root);
}

export interface BuildOptions {
  /** Run every step named, stale or not. */
  force?: boolean;
  log?: (line: string) => void;
  /** The repository (tests build a scratch one). */
  root?: string;
  steps?: readonly BuildStep[];
}

/**
 * Run the stale steps among `names` (all of them with `force`), in order;
 * throws when one fails, and its stamp is then removed so it runs again next time.
 */
export function build(names?: readonly string[], { force = false, log = console.log, root = ROOT, steps = STEPS }: BuildOptions = {}): void {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  for (const step of steps) {
    if ((names !== undefined && !names.includes(step.name)) || !(force || isStale(step, root))) continue;
    log(`build: ${step.name} (${force ? 'forced' : 'stale'})`);
    const before = fingerprint(step, root);
    rmSync(stampPath(step, root), { force: true });
    const run = spawnSync(npm, ['run', '--silent', `build:${step.name}`], { cwd: root, stdio: 'inherit' });
    if (run.status !== 0) throw new Error(`build:${step.name} failed (exit ${run.status ?? run.signal})`);
    mkdirSync(join(root, STAMPS), { recursive: true });
    writeFileSync(stampPath(step, root), before);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const names = args.filter((a) => !a.startsWith('--'));
  const known = STEPS.map((s) => s.name);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0 || args.some((a) => a.startsWith('--') && a !== '--force')) {
    console.error(`usage: scripts/build.ts [--force] [${known.join('|')} ...]`);
    process.exit(2);
  }
  try {
    build(names.length > 0 ? names : undefined, { force: args.includes('--force') });
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
}
