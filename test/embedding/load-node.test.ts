// Loading the shipped model from files only, and texts in, vectors out.
import net from 'node:net';
import { expect } from 'chai';
import { loadTextEmbedder } from '../../src/embedding/load-node.js';
import { MODEL } from '../../src/embedding/weights.js';
import { fixture, maxAbsDiff } from './fixture.js';

describe('embedding load-node', () => {
  it('loads without touching the network (fetch and sockets refuse)', () => {
    const { fetch } = globalThis;
    const { connect } = net.Socket.prototype;
    let attempts = 0;
    globalThis.fetch = () => {
      attempts++;
      return Promise.reject(new Error('no network'));
    };
    net.Socket.prototype.connect = function refuse(): never {
      attempts++;
      throw new Error('no network');
    };
    try {
      const embedder = loadTextEmbedder();
      expect(embedder.embed(['loaded offline'])).to.have.length(MODEL.width);
    } finally {
      globalThis.fetch = fetch;
      net.Socket.prototype.connect = connect;
    }
    expect(attempts).to.equal(0);
  });

  it('embeds texts as the package does, 512 floats each', () => {
    const embedder = loadTextEmbedder();
    const picked = fixture.slice(0, 12);
    const vectors = embedder.embed(picked.map((e) => e.text));
    expect(vectors).to.have.length(picked.length * embedder.dimension);
    picked.forEach((e, i) => {
      expect(maxAbsDiff(vectors.subarray(i * MODEL.width, (i + 1) * MODEL.width), e.vector)).to.be.at.most(1e-6);
    });
  });

  it('refuses the empty text (it has no token) and truncates a long one at 128 tokens', () => {
    const embedder = loadTextEmbedder();
    expect(() => embedder.embed(['fine', ''])).to.throw(RangeError, /not 0/);
    const long = 'word '.repeat(128);
    expect(embedder.embed([long + 'different ending'])).to.deep.equal(embedder.embed([long]));
  });
});
