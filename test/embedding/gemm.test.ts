// The kernel's gemm (assembly/embedding/index.ts) against a plain float64
// product on random data: every row count around the 4-row blocks, input
// widths around the 64-input passes, with and without the residual and relu.
import { expect } from 'chai';
import { type EncoderExports, packPanels } from '../../src/embedding/encoder.js';
import { loadEncoderModule } from '../../src/embedding/load-node.js';
import { seededRng } from '../helpers/random.js';
import { maxAbsDiff } from './fixture.js';

const memory = new WebAssembly.Memory({ initial: 64 });
const kernel = new WebAssembly.Instance(loadEncoderModule(), { env: { memory } }).exports as unknown as EncoderExports;
const PANEL = kernel.PANEL.value as number;
const rng = seededRng(35);
const random = (n: number) => Float32Array.from({ length: n }, () => rng() * 2 - 1);

/** Plain y = x . w + bias (+ residual), relu'd, from the unpacked [inWidth, outWidth] w. */
function plain(
  x: Float32Array,
  rows: number,
  w: Float32Array,
  inWidth: number,
  outWidth: number,
  bias: Float32Array,
  residual: Float32Array | null,
  relu: boolean,
) {
  const y = new Float32Array(rows * outWidth);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < outWidth; c++) {
      let s = bias[c] + (residual ? residual[r * outWidth + c] : 0);
      for (let k = 0; k < inWidth; k++) s += x[r * inWidth + k] * w[k * outWidth + c];
      y[r * outWidth + c] = relu ? Math.max(s, 0) : s;
    }
  return y;
}

describe('embedding kernel gemm', () => {
  it('packs a dense kernel in panels of 8 columns', () => {
    const w = Float32Array.from({ length: 3 * 16 }, (_, i) => i);
    const packed = packPanels(w, 3, 16, 8);
    expect(Array.from(packed.subarray(0, 10))).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 16, 17]);
    expect(Array.from(packed.subarray(24, 26))).to.deep.equal([8, 9]);
  });

  for (const inWidth of [1, 7, 64, 65, 200])
    for (const rows of [1, 3, 4, 5, 9])
      for (const [withResidual, relu] of [
        [false, false],
        [true, true],
      ])
        it(`${rows} rows x ${inWidth} inputs -> 16 outputs${withResidual ? ' + residual, relu' : ''} as the plain product`, () => {
          const outWidth = 2 * PANEL;
          const x = random(rows * inWidth);
          const w = random(inWidth * outWidth);
          const bias = random(outWidth);
          const residual = withResidual ? random(rows * outWidth) : null;
          const at = { x: 1024, w: 1024 + 65536, bias: 1024 + 2 * 65536, residual: 1024 + 3 * 65536, out: 1024 + 4 * 65536 };
          const floats = new Float32Array(memory.buffer);
          floats.set(x, at.x / 4);
          floats.set(packPanels(w, inWidth, outWidth, PANEL), at.w / 4);
          floats.set(bias, at.bias / 4);
          if (residual) floats.set(residual, at.residual / 4);
          floats.fill(Number.NaN, at.out / 4, at.out / 4 + rows * outWidth + 8);
          kernel.gemm(at.x, rows, inWidth, at.w, outWidth, at.bias, residual ? at.residual : 0, at.out, relu ? 1 : 0);
          const out = floats.slice(at.out / 4, at.out / 4 + rows * outWidth);
          expect(maxAbsDiff(out, plain(x, rows, w, inWidth, outWidth, bias, residual, relu))).to.be.below(1e-5);
          expect(Number.isNaN(floats[at.out / 4 + rows * outWidth]), 'a write past the output').to.equal(true);
        });
});
