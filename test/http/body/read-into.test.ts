// readInto (src/http/body/read-into.ts) against raw-body, which it replaces for
// large bodies with a Content-Length: on the same sequence of stream events
// both give the same bytes or fail the same way (status, type, message).
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import getRawBody from 'raw-body';
import { readGrowing, readInto } from '../../../src/http/body/read-into.js';

type Event = Buffer | 'end' | 'aborted' | 'error' | 'close';

/** A request-like stream that goes through `events`, one per macrotask, as a socket would deliver them. */
function streamOf(events: Event[]): PassThrough {
  const stream = new PassThrough();
  (async () => {
    for (const event of events) {
      await new Promise((resolve) => setImmediate(resolve));
      if (event === 'end') stream.end();
      else if (event === 'aborted') stream.emit('aborted');
      else if (event === 'error') stream.destroy(new Error('socket hang up'));
      else if (event === 'close') stream.emit('close');
      else stream.write(event);
    }
  })();
  return stream;
}

type Outcome = { bytes: string } | { status: number; type: string; message: string } | 'pending';

async function outcome(read: Promise<Buffer>): Promise<Outcome> {
  const pending = new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), 100));
  try {
    const result = await Promise.race([read, pending]);
    return result === 'pending' ? result : { bytes: result.toString('latin1') };
  } catch (err) {
    const { status, type, message } = err as { status: number; type: string; message: string };
    return { status, type, message };
  }
}

const bytes = (text: string) => Buffer.from(text, 'latin1');

async function compare(events: Event[], length: number, limit: number): Promise<Outcome> {
  const target = Buffer.alloc(length + 8, 0x78);
  const mine = await outcome(readInto(streamOf(events), length, limit, target));
  const theirs = await outcome(getRawBody(streamOf(events), { length, limit }));
  expect(mine).to.deep.equal(theirs);
  return mine;
}

describe('readInto (a body of announced length into one buffer)', () => {
  it('reads the announced bytes, in any number of chunks, into the given buffer', async () => {
    expect(await compare([bytes('{"a":'), bytes('1'), bytes('}'), 'end'], 7, 100)).to.deep.equal({ bytes: '{"a":1}' });
    expect(await compare([bytes('{}'), 'end'], 2, 2)).to.deep.equal({ bytes: '{}' });
    const target = Buffer.alloc(10);
    const result = await readInto(streamOf([bytes('abc'), 'end']), 3, 10, target);
    expect(result.buffer).to.equal(target.buffer);
    expect(result.length).to.equal(3);
  });

  it('fails like raw-body: short, long, over the limit, aborted, stream error', async () => {
    expect(await compare([bytes('abc'), 'end'], 5, 100)).to.include({ status: 400, type: 'request.size.invalid' });
    expect(await compare([bytes('abcdef'), bytes('gh'), 'end'], 5, 100)).to.include({ status: 400, type: 'request.size.invalid' });
    expect(await compare([bytes('abc'), bytes('def'), 'end'], 5, 5)).to.include({ status: 413, type: 'entity.too.large' });
    expect(await compare([bytes('abc'), 'aborted', bytes('de'), 'end'], 5, 100)).to.include({ status: 400, type: 'request.aborted' });
    expect(await compare([bytes('abc'), 'error'], 5, 100)).to.include({ message: 'socket hang up' });
    expect(await compare([bytes('abc'), 'close'], 5, 100)).to.equal('pending');
  });

  it('never writes past the announced length of the buffer', async () => {
    const target = Buffer.alloc(8, 0x78);
    await outcome(readInto(streamOf([bytes('abcdef'), bytes('ghij'), 'end']), 5, 100, target));
    expect(target.toString('latin1', 5)).to.equal('xxx');
  });
});

describe('readGrowing (a large body into a buffer that grows as it arrives)', () => {
  /** Random bytes cut into random chunks (up to 40 KiB, so the buffer grows several times past its first 64 KiB). */
  function randomBody(seed: number, length: number): Buffer[] {
    let x = seed;
    const next = () => {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      return x / 2 ** 31;
    };
    const body = Buffer.alloc(length);
    for (let i = 0; i < length; i++) body[i] = Math.floor(next() * 256);
    const chunks: Buffer[] = [];
    for (let at = 0; at < length; ) {
      const n = Math.min(length - at, 1 + Math.floor(next() * 40 * 1024));
      chunks.push(body.subarray(at, at + n));
      at += n;
    }
    return chunks;
  }

  it('gives the bytes raw-body gives, and holds each capacity (at most twice what arrived) before allocating it', async () => {
    for (const [seed, length] of [
      [1, 1],
      [2, 64 * 1024],
      [3, 64 * 1024 + 1],
      [4, 700_000],
      [5, 1_500_000],
    ]) {
      const chunks = randomBody(seed, length);
      let arrived = 0;
      const held: { capacity: number; arrived: number }[] = [];
      const mine = await outcome(
        readGrowing(
          streamOf([...chunks, 'end']),
          length,
          length,
          (n) => (arrived += n),
          (capacity) => held.push({ capacity, arrived }),
        ),
      );
      const theirs = await outcome(getRawBody(streamOf([...chunks, 'end']), { length, limit: length }));
      expect(mine).to.deep.equal(theirs);
      for (const { capacity, arrived: at } of held) {
        expect(capacity).to.be.at.most(length);
        expect(capacity).to.be.at.most(Math.max(2 * at, 128 * 1024));
      }
      // Capacities only grow, the last one is the body's length.
      if (length > 64 * 1024) expect(held.at(-1)?.capacity).to.equal(length);
      expect(held.map((h) => h.capacity)).to.deep.equal([...held.map((h) => h.capacity)].sort((a, b) => a - b));
    }
  });

  it('fails like raw-body: short, long, over the limit, aborted; a throw from hold ends the read', async () => {
    const big = Buffer.alloc(100_000, 0x61);
    for (const [events, length, limit] of [
      [[big, 'end'], 100_001, 200_000],
      [[big, big, 'end'], 150_000, 300_000],
      [[big, big, 'end'], 150_000, 150_000],
      [[big, 'aborted', big, 'end'], 150_000, 300_000],
    ] as [Event[], number, number][]) {
      const mine = await outcome(readGrowing(streamOf(events), length, limit));
      const theirs = await outcome(getRawBody(streamOf(events), { length, limit }));
      expect(mine).to.deep.equal(theirs);
    }
    const refused = Object.assign(new Error('no room'), { status: 503, type: 'x' });
    const read = readGrowing(streamOf([big, 'end']), 100_000, 100_000, undefined, () => {
      throw refused;
    });
    expect(await outcome(read)).to.deep.equal({ status: 503, type: 'x', message: 'no room' });
  });
});
