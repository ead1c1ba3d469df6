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

  it('cuts a last record whose bytes were garbled (a torn page), at any byte', () => {
    const whole = log({ t: 'open' });
    const last = encodeRecord({ t: 'b', pad: 'x'.repeat(20) });
    for (let flip = 0; flip < last.length; flip++) {
      for (const bit of [0x01, 0x80]) {
        const damaged = Buffer.from(last);
        damaged[flip] ^= bit;
        const decoded = decodeLog(Buffer.concat([whole, damaged]));
        expect(decoded.records, `byte ${flip} bit ${bit}`).to.deep.equal([{ t: 'open' }]);
        expect(decoded.validBytes).to.equal(whole.length);
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

  it('keeps the longest valid prefix of a log damaged before its last records, and counts the whole records cut', () => {
    const head = log({ t: 'open' }, { t: 'first' });
    const bytes = Buffer.concat([head, log({ t: 'middle', pad: 'xxxxxxxx' }, { t: 'last' }, { t: 'touch', at: 1 })]);
    for (const flip of [head.length, head.length + 3, head.length + 12]) {
      const damaged = Buffer.from(bytes);
      damaged[flip] ^= 0x20;
      const decoded = decodeLog(damaged);
      expect(decoded.records, `byte ${flip}`).to.deep.equal([{ t: 'open' }, { t: 'first' }]);
      expect(decoded.validBytes).to.equal(head.length);
      expect(decoded.cutRecords).to.equal(2);
      expect(decoded.tornTail).to.match(/2 whole records after it/);
    }
  });

  it('refuses damage that a later sync record says was on stable storage (FSYNC=always acknowledged it)', () => {
    const head = log({ t: 'open' });
    const synced = log({ t: 'middle', pad: 'xxxxxxxx' }, { t: 'last' });
    // The sync record covers everything before it (back 0), or everything but the last record.
    for (const [back, refused] of [[0, true], [encodeRecord({ t: 'last' }).length, true], [synced.length, false]] as const) {
      const bytes = Buffer.concat([head, synced, encodeRecord({ t: 'synced', back })]);
      bytes[head.length + 12] ^= 0x20;
      if (refused) expect(() => decodeLog(bytes), `back ${back}`).to.throw(CorruptLogError, /stable storage/);
      else expect(decodeLog(bytes).records, `back ${back}`).to.deep.equal([{ t: 'open' }]);
    }
  });

  it('keeps float32 rows exact through base64', () => {
    const values = Float32Array.from([0.1, -0, 1e-40, 3.4e38, -7.25, Math.PI]);
    expect(Array.from(base64ToFloat32(float32ToBase64(values)))).to.deep.equal(Array.from(values));
    const view = new Float32Array(Float32Array.from([9, 1, 2, 9]).buffer, 4, 2);
    expect(Array.from(base64ToFloat32(float32ToBase64(view)))).to.deep.equal([1, 2]);
  });
});
