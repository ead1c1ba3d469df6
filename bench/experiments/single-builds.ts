// npm run bench:experiment -- single-builds --baseline old.wasm: bench:single
// (the single-query scan at 1k, 10k and 100k x 384 for cosine, l2 and the
// bare dot product, against the read-only floors) with other builds of the
// kernel (`--baseline` repeatable, `name=path` to label it) beside the
// current one (build/kernel.bench.wasm), each over
// its own memory holding the same rows, interleaved with it; their ids must
// equal the current build's for every query and metric before timing counts.
// To compare with the previous commit:
//   git stash -u && npm run build:kernel && cp build/kernel.bench.wasm /tmp/old.wasm && git stash pop
//   npm run build:kernel && npm run bench:experiment -- single-builds --baseline before=/tmp/old.wasm
import { loadKernelFile } from '../lib/bench-kernel.js';
import { uniformVectors } from '../lib/data.js';
import { fmt, interleave, printTable, quick, type Case } from '../lib/measure.js';
import { writeExperimentResults } from '../lib/results.js';
import { sameIds } from '../lib/plain.js';
import { RawKernel, type RawMetric } from '../lib/raw-kernel.js';

const DIM = 384;
const K = 10;
const QUERIES = 8;
const METRICS: RawMetric[] = ['cosine', 'l2', 'dot'];
const sizes = quick ? [1_000, 2_000] : [1_000, 10_000, 100_000];

function baselines(): { name: string; module: WebAssembly.Module }[] {
  const out: { name: string; module: WebAssembly.Module }[] = [];
  process.argv.forEach((arg, i) => {
    if (arg !== '--baseline') return;
    const spec = process.argv[i + 1];
    const eq = spec.indexOf('=');
    const name = eq > 0 ? spec.slice(0, eq) : `base${out.length + 1}`;
    out.push({ name, module: loadKernelFile(eq > 0 ? spec.slice(eq + 1) : spec) });
  });
  return out;
}

const others = baselines();
const rows: Record<string, string | number>[] = [];
for (const n of sizes) {
  const data = uniformVectors(n, DIM, 41);
  const queries = uniformVectors(QUERIES, DIM, 42);
  const query = (i: number) => queries.subarray(i * DIM, (i + 1) * DIM);
  const kernels = [{ name: 'now', kernel: new RawKernel(data, DIM) }, ...others.map((o) => ({ name: o.name, kernel: new RawKernel(data, DIM, n, o.module) }))];

  for (const metric of METRICS) {
    for (let q = 0; q < QUERIES; q++) {
      const ids = kernels[0].kernel.search(query(q), 1, K, metric);
      for (const { name, kernel } of kernels.slice(1)) {
        if (!sameIds(kernel.search(query(q), 1, K, metric), ids)) throw new Error(`${n}, ${metric}, query ${q}: ${name} and now differ`);
      }
    }
  }

  const cases: Case[] = [
    { name: 'floor', run: () => kernels[0].kernel.readFloor() },
    { name: 'floor4', run: () => kernels[0].kernel.readFloor4() },
  ];
  for (const metric of METRICS) {
    for (const { name, kernel } of kernels) {
      let q = 0;
      cases.push({ name: `${metric} ${name}`, run: () => kernel.search(query(q++ % QUERIES), 1, K, metric) });
    }
  }
  const t = Object.fromEntries(interleave(cases, { rounds: 9, targetMs: 60 }).map((x) => [x.name, x.ms]));
  for (const metric of METRICS) {
    const row: Record<string, string | number> = {
      vectors: n,
      dim: DIM,
      metric,
      ms: t[`${metric} now`],
      'floor ms': t.floor,
      'floor4 ms': t.floor4,
      '/floor': fmt(t[`${metric} now`] / t.floor, 2),
      '/floor4': fmt(t[`${metric} now`] / t.floor4, 2),
    };
    for (const { name } of kernels.slice(1)) {
      row[`${name} ms`] = t[`${metric} ${name}`];
      row[`now/${name}`] = fmt(t[`${metric} now`] / t[`${metric} ${name}`]);
    }
    rows.push(row);
  }
  console.error(`done ${n}`);
}
printTable(rows);
console.log(`results: ${writeExperimentResults('single-builds', { topK: K, baselines: others.map((o) => o.name), rows })}`);
