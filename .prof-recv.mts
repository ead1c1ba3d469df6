import { spawn } from 'node:child_process'; import { Pool } from 'undici'; import { readFileSync } from 'node:fs';
import { encodeFloat32Base64 } from './src/schemas/base64-float32.js';
import { rowOf, uniformVectors } from './bench/lib/data.js';
const data = uniformVectors(1000, 384, 51);
const body = Buffer.from(JSON.stringify({ vectors: Array.from({ length: 1000 }, (_, i) => ({ id: `doc-${i}`, vector: encodeFloat32Base64(rowOf(data, 384, i)) })) }));
async function start(args: string[]) { const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] }); const port = await new Promise<number>((r) => { let o = ''; child.stdout!.on('data', (c) => { o += c; const m = /READY (\d+)/.exec(o); if (m) r(Number(m[1])); }); }); return { child, pool: new Pool(`http://127.0.0.1:${port}`, { connections: 8 }) }; }
const bare = await start(['/tmp/exp/srv2.mjs']); const ours = await start(['.prof-serve-recv.mjs']);
const tok = await (await ours.pool.request({ method: 'POST', path: '/token' })).body.json() as any;
const stat = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return [Number(f[11]) * 10, Number(f[12]) * 10]; };
async function run(s: any, path: string, count = 300) {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${tok.token}` };
  let left = count; const [u0, s0] = stat(s.child.pid); const t0 = performance.now();
  await Promise.all(Array.from({ length: 4 }, async () => { while (left-- > 0) { const res = await s.pool.request({ method: 'POST', path, headers, body }); await res.body.dump(); if (res.statusCode !== 200) throw new Error(path + res.statusCode); } }));
  const [u1, s1] = stat(s.child.pid);
  return [(performance.now() - t0) / count, (u1 - u0) / count, (s1 - s0) / count];
}
const cases: [any, string][] = [[bare, '/copy'], [ours, '/recv-into'], [ours, '/drain'], [ours, '/vectors/add-many']];
const res = cases.map(() => [] as number[][]);
for (let r = 0; r < 5; r++) for (let i = 0; i < cases.length; i++) res[i].push(await run(cases[i][0], cases[i][1]));
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];
cases.forEach(([, p], i) => console.log(p.padEnd(20), 'wall', med(res[i].map((x) => x[0])).toFixed(2), 'user', med(res[i].map((x) => x[1])).toFixed(2), 'sys', med(res[i].map((x) => x[2])).toFixed(2), 'cpu', med(res[i].map((x) => x[1] + x[2])).toFixed(2)));
bare.child.kill(); ours.child.kill(); process.exit(0);
