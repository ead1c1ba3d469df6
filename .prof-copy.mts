const mem = new WebAssembly.Memory({ initial: 64, maximum: 64 });
const bytes = new Uint8Array(mem.buffer); const floats = new Float32Array(mem.buffer);
const body = Buffer.alloc(2076903, 65); const out = new Float32Array(384000);
for (let r = 0; r < 5; r++) {
  let t0 = performance.now();
  for (let k = 0; k < 200; k++) { bytes.set(body.subarray(0, 1 << 20), 1024); bytes.set(body.subarray(1 << 20), 1024); }
  const a = (performance.now() - t0) / 200;
  t0 = performance.now();
  for (let k = 0; k < 200; k++) { out.set(floats.subarray(300000, 300000 + 262144), 0); out.set(floats.subarray(300000, 300000 + 121856), 262144); }
  const b = (performance.now() - t0) / 200;
  console.log('load copies ms', a.toFixed(3), 'flush copies ms', b.toFixed(3));
}
