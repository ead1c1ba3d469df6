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

  it('cuts a last record whose bytes were garbled', () => {
    const whole = log({ t: 'open' });
    const last = encodeRecord({ t: 'b' });
    last[last.length - 2] ^= 0xff;
    const decoded = decodeLog(Buffer.concat([whole, last]));
    expect(decoded.records).to.deep.equal([{ t: 'open' }]);
    expect(decoded.tornTail).to.match(/checksum/);
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
