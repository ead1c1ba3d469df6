// A bench's results as JSON in bench/results/<bench>.json (committed): the
// figures it printed and where they come from (commit, date, load average,
// machine). npm run docs renders docs/performance.md's tables from them.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { quick } from './measure.js';

export const RESULTS_DIR = new URL('../results/', import.meta.url);

/** The commit the bench ran on, `+changes` when src/, assembly/ or bench/ differ from it. */
function commit(): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: new URL('../../', import.meta.url), encoding: 'utf8' }).trim();
  try {
    const changed = git('status', '--porcelain', '--', 'src', 'assembly', 'bench', ':!bench/results') !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${changed ? '+changes' : ''}`;
  } catch {
    return 'unknown';
  }
}

/** Where and when the figures were measured. */
export function runContext() {
  return {
    commit: commit(),
    date: new Date().toISOString(),
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
    machine: { cores: availableParallelism(), cpu: cpus()[0]?.model ?? 'unknown', node: process.version, platform: `${process.platform}-${process.arch}` },
  };
}

/** A run limited to some of a bench's cases (ABUSE_ONLY, ADVERSARY_ONLY, ...): its figures would replace the whole table. */
const partial = Object.entries(process.env).some(([key, value]) => key.endsWith('_ONLY') && value);

/**
 * Write bench/results/<name>.json (a run limited by a *_ONLY variable: bench/results/partial/, with --quick bench/results/quick/, not committed): the run's context, then `data`.
 * `data.tables` holds the tables the bench printed, by name (each an array of flat rows): docs/performance.md shows them.
 * Returns the path.
 */
export function writeResults(name: string, data: object): string {
  const file = new URL(`${quick ? 'quick/' : partial ? 'partial/' : ''}${name}.json`, RESULTS_DIR);
  mkdirSync(new URL('./', file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ ...runContext(), ...data }, null, 2)}\n`);
  return file.pathname;
}

/** An experiment's results, in bench/results/experiments/ (not committed: an experiment served one decision, told in docs/experiments/). */
export const writeExperimentResults = (name: string, data: object): string => writeResults(`experiments/${name}`, data);
