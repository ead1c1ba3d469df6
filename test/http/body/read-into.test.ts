// readInto (src/http/body/read-into.ts) against raw-body, which it replaces for
// large bodies with a Content-Length: on the same sequence of stream events
// both give the same bytes or fail the same way (status, type, message).
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import getRawBody from 'raw-body';
import { readInto } from '../../../src/http/body/read-into.js';

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
