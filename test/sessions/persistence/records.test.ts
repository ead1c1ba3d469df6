import { expect } from 'chai';
import { base64ToFloat32, CorruptLogError, decodeLog, encodeRecord, float32ToBase64 } from '../../../src/sessions/persistence/records.js';

const log = (...payloads: unknown[]) => Buffer.concat(payloads.map(encodeRecord));

describe('session log records', () => {
  it('decodes what it encodes, in order', () => {
    const payloads = [{ t: 'open' }, { t: 'x', n: 1, s: 'é✓' }, { t: 'y', list: [1, null, {}] }];
    const decoded = decodeLog(log(...payloads));
    expect(decoded.records).to.deep.equal(payloads);
    expect(decoded.tornTail).to.equal(null);
  });

  it('cuts a torn last record at any byte and keeps every whole record before it', () => {
    const whole = log({ t: 'open' }, { t: 'a' });
    const last = encodeRecord({ t: 'torn', data: 'x'.repeat(50) });
    for (let cut = 1; cut < last.length; cut++) {
      const decoded = decodeLog(Buffer.concat([whole, last.subarray(0, cut)]));
      expect(decoded.records, `cut at ${cut}`).to.deep.equal([{ t: 'open' }, { t: 'a' }]);
      expect(decoded.validBytes).to.equal(whole.length);
      expect(decoded.tornTail).to.be.a('string');
    }
  });

  it('refuses a last record written whole whose bytes were garbled', () => {
    const whole = log({ t: 'open' });
    const last = encodeRecord({ t: 'b', pad: 'x'.repeat(20) });
    for (let flip = 0; flip < last.length; flip++) {
      for (const bit of [0x01, 0x80]) {
        const damaged = Buffer.from(last);
        damaged[flip] ^= bit;
        expect(() => decodeLog(Buffer.concat([whole, damaged])), `byte ${flip} bit ${bit}`).to.throw(CorruptLogError);
      }
    }
  });

  it('cuts zeros or garbage after the last whole record', () => {
    const whole = log({ t: 'open' }, { t: 'a', n: 1 });
    const garbage = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 89 + 7) % 256));
    for (const tail of [Buffer.alloc(4096), Buffer.alloc(1), garbage, Buffer.concat([garbage, Buffer.alloc(4096)])]) {
      const decoded = decodeLog(Buffer.concat([whole, tail]));
      expect(decoded.records).to.deep.equal([{ t: 'open' }, { t: 'a', n: 1 }]);
      expect(decoded.validBytes).to.equal(whole.length);
      expect(decoded.tornTail).to.be.a('string');
    }
  });

  it('cuts a record cut short and then padded with zeros (a power-loss tail)', () => {
    const whole = log({ t: 'open' });
    const last = encodeRecord({ t: 'b', pad: 'x'.repeat(100) });
    const decoded = decodeLog(Buffer.concat([whole, last.subarray(0, 50), Buffer.alloc(4096)]));
    expect(decoded.records).to.deep.equal([{ t: 'open' }]);
    expect(decoded.validBytes).to.equal(whole.length);
  });

  it('refuses a log damaged before its last record', () => {
    const bytes = log({ t: 'open' }, { t: 'middle', pad: 'xxxxxxxx' }, { t: 'last' });
    const middle = encodeRecord({ t: 'open' }).length + 12;
    for (const flip of [middle, middle + 3]) {
      const damaged = Buffer.from(bytes);
      damaged[flip] ^= 0x20;
      expect(() => decodeLog(damaged), `byte ${flip}`).to.throw(CorruptLogError);
    }
    const badLength = Buffer.from(bytes);
    badLength.writeUInt32LE(0xfffffff0, 0);
    expect(() => decodeLog(badLength)).to.throw(CorruptLogError);
  });

  it('keeps float32 rows exact through base64', () => {
    const values = Float32Array.from([0.1, -0, 1e-40, 3.4e38, -7.25, Math.PI]);
    expect(Array.from(base64ToFloat32(float32ToBase64(values)))).to.deep.equal(Array.from(values));
    const view = new Float32Array(Float32Array.from([9, 1, 2, 9]).buffer, 4, 2);
    expect(Array.from(base64ToFloat32(float32ToBase64(view)))).to.deep.equal([1, 2]);
  });
});
