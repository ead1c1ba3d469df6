// Values read back are the shortest decimals of the stored float32 values.
import { expect } from 'chai';
import { float32ArrayToNumbers, shortestFloat32 } from '../../src/index/float32.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { seededRng } from '../helpers/random.js';

describe('float32 values read back', () => {
  it('get returns what was added, written as the shortest float32 decimal', () => {
    const index = new VectorIndex(loadKernelModule(), 10);
    index.upsert([{ id: 'a', vector: [0.1, -0.2, 1 / 3, 1e-7, 123456.789, 3.4e38] }]);
    expect(index.get('a')!.vector).to.deep.equal([0.1, -0.2, 0.33333334, 1e-7, 123456.79, 3.4e38]);
  });

  it('every shortest decimal rounds back to the same float32 and no shorter one does', () => {
    const rng = seededRng(2024);
    const values = Float32Array.from({ length: 5000 }, () => (rng() - 0.5) * 10 ** Math.floor(rng() * 20 - 10));
    float32ArrayToNumbers(values).forEach((x, i) => {
      expect(Math.fround(x), String(values[i])).to.equal(values[i]);
      const digits = x.toExponential().replace(/^-?(\d)\.?(\d*)e.*$/, '$1$2').length;
      if (digits > 1) expect(Math.fround(Number(x.toPrecision(digits - 1)))).to.not.equal(values[i]);
    });
  });

  it('keeps zero, negative zero and whole numbers as they are', () => {
    expect(shortestFloat32(0)).to.equal(0);
    expect(Object.is(shortestFloat32(-0), -0)).to.equal(true);
    expect(shortestFloat32(16777216)).to.equal(16777216);
  });
});
