import { parseVectorJson } from './dist/http/vector-json.js';
import { encodeFloat32Base64 } from './src/schemas/base64-float32.js';
import { rowOf, uniformVectors } from './bench/lib/data.js';
const data = uniformVectors(1000, 384, 51);
const body = Buffer.from(JSON.stringify({ vectors: Array.from({ length: 1000 }, (_, i) => ({ id: `doc-${i}`, vector: encodeFloat32Base64(rowOf(data, 384, i)) })) }));
for (let r = 0; r < 5; r++) { const t0 = performance.now(); for (let k = 0; k < 200; k++) parseVectorJson(body); console.log('reader ms', ((performance.now() - t0) / 200).toFixed(3)); }
const { isAscii } = await import('node:buffer');
let t0 = performance.now(); for (let k = 0; k < 200; k++) isAscii(body); console.log('isAscii ms', ((performance.now() - t0) / 200).toFixed(3));
const { base64Decoder } = await import('./dist/http/base64-decoder.js');
const dec = base64Decoder(); const out = new Float32Array(384 * 1000);
// decode every vector: positions of strings
const starts: number[] = []; let p = 0; while ((p = body.indexOf('"vector":"', p)) >= 0) { starts.push(p + 10); p += 10; }
t0 = performance.now(); for (let k = 0; k < 200; k++) { dec.reset(); for (let i = 0; i < starts.length; i++) dec.decode(body, starts[i], starts[i] + 2048, out, i * 384); dec.flush(); } console.log('decode only ms', ((performance.now() - t0) / 200).toFixed(3));
