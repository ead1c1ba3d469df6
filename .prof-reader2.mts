import { parseVectorJson } from './dist/http/vector-json.js';
import { BodySpace } from './dist/http/body-space.js';
import { ArenaLease, ArenaPool } from './dist/http/arena-pool.js';
import { loadKernelModule } from './dist/kernel/load-node.js';
import { encodeFloat32Base64 } from './src/schemas/base64-float32.js';
import { rowOf, uniformVectors } from './bench/lib/data.js';
const data = uniformVectors(1000, 384, 51);
const text = JSON.stringify({ vectors: Array.from({ length: 1000 }, (_, i) => ({ id: `doc-${i}`, vector: encodeFloat32Base64(rowOf(data, 384, i)) })) });
const space = new BodySpace(loadKernelModule(), BodySpace.bytesFor(text.length));
const pool = new ArenaPool();
const bytes = space.open(text.length); bytes.write(text, 'latin1');
for (let r = 0; r < 6; r++) { const t0 = performance.now(); for (let k = 0; k < 300; k++) { const l = new ArenaLease(pool); space.open(text.length); parseVectorJson(bytes, l, space); l.release(); } console.log('reader ms', ((performance.now() - t0) / 300).toFixed(3)); }
