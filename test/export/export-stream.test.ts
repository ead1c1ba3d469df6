// The export stream: the same text as exportText, given out in pieces of
// about PIECE_CHARS however much metadata a batch carries, and the snapshot
// closed when the stream is destroyed early.
import { expect } from 'chai';
import { EXPORT_WINDOW_BYTES, exportPieces, exportStream, PIECE_CHARS } from '../../src/export/export-stream.js';
import { exportText, type VectorEncoding } from '../../src/export/format.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { randomVector, seededRng } from '../helpers/random.js';

/** `count` vectors of `dim`, each with about `metadataChars` of metadata (some of it non-ASCII). */
function filled(count: number, dim: number, metadataChars: number): VectorIndex {
  const index = new VectorIndex(loadKernelModule(), 10_000);
  const rng = seededRng(dim);
  index.upsert(
    Array.from({ length: count }, (_, i) => ({
      id: `v${i}`,
      vector: randomVector(rng, dim),
      metadata: { i, text: `é${i}`.padEnd(metadataChars, 'x') },
    })),
    { metric: 'cosine' },
  );
  return index;
}

async function piecesOf(index: VectorIndex, encoding: VectorEncoding): Promise<string[]> {
  const pieces: string[] = [];
  for await (const piece of exportPieces(index.openExport(), encoding)) pieces.push(piece);
  return pieces;
}

describe('export stream', () => {
  for (const encoding of ['base64', 'numbers'] as const) {
    it(`gives exportText's text in pieces of about PIECE_CHARS, metadata heavy or not (${encoding})`, async () => {
      for (const [dim, metadataChars] of [
        [2, 4000],
        [384, 0],
        [3, 0],
      ]) {
        const index = filled(2000, dim, metadataChars);
        const pieces = await piecesOf(index, encoding);
        expect(pieces.join(''), `${dim} ${metadataChars}`).to.equal(exportText(index.openExport(), encoding));
        const longestLine = Math.max(
          ...pieces
            .join('')
            .split('\n')
            .map((line) => line.length + 1),
        );
        for (const piece of pieces) expect(piece.length, `${dim} ${metadataChars}`).to.be.at.most(PIECE_CHARS + longestLine);
        expect(3 * (PIECE_CHARS + longestLine)).to.be.below(EXPORT_WINDOW_BYTES);
      }
    });
  }

  it('closes the snapshot when the stream is destroyed before its end', async () => {
    const index = filled(3000, 64, 100);
    let closed = 0;
    const exp = index.openExport();
    const stream = exportStream(exp, 'numbers', () => closed++);
    for await (const piece of stream) {
      expect(piece.length).to.be.above(0);
      break; // leaving the loop destroys the stream
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).to.equal(1);
    // The snapshot is closed: it gives nothing more and keeps no copies of vectors changed later.
    expect(exp.next(10)).to.deep.equal([]);
  });
});
