// Texts as stored: the bytes answers write are exactly JSON.stringify's
// literal, whatever the text holds; replace keeps or drops the text as the
// new record says; a listing and an export carry it.
import { expect } from 'chai';
import { VectorIndex } from '../../../src/index/vector-index.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';

const newIndex = () => new VectorIndex(loadKernelModule(), 1000);
const TEXTS = [
  'plain words',
  '',
  'say "hi"',
  'back\\slash',
  'tab\there\nnew line',
  '\u0000\u001f\u007f',
  'caf\u00e9 東京 🚀',
  'lone \ud800 surrogate',
  '\u2028\u2029',
];

describe('stored texts', () => {
  it("keeps each text as exactly JSON.stringify's literal", () => {
    const index = newIndex();
    index.upsert(TEXTS.map((text, i) => ({ id: `t${i}`, vector: [1, i], text })));
    TEXTS.forEach((text, i) => {
      const stored = index.get(`t${i}`)!.text!;
      expect(stored.json, JSON.stringify(text)).to.equal(JSON.stringify(text));
      expect(stored.value()).to.equal(text);
      expect(index.textJsonBytes(`t${i}`)).to.equal(Buffer.byteLength(JSON.stringify(text)));
    });
    expect(index.stats().text.jsonBytes).to.equal(TEXTS.reduce((sum, t) => sum + Buffer.byteLength(JSON.stringify(t)), 0));
  });

  it('replaces the whole record: an add without text drops the old text, setMetadata keeps it', () => {
    const index = newIndex();
    index.upsert([{ id: 'a', vector: [1, 0], text: 'alpha' }]);
    index.setMetadata('a', { k: 1 });
    expect(index.get('a')!.text!.value()).to.equal('alpha');
    expect(index.search(null, { queryTexts: ['alpha'] }).results[0].map((h) => h.id)).to.deep.equal(['a']);
    index.upsert([{ id: 'a', vector: [1, 0], text: 'beta' }]);
    expect(index.search(null, { queryTexts: ['alpha'] }).results[0]).to.deep.equal([]);
    index.upsert([{ id: 'a', vector: [1, 0] }]);
    expect(index.get('a')).to.not.have.property('text');
    expect(index.search(null, { queryTexts: ['beta'] }).results[0]).to.deep.equal([]);
    expect(index.stats().textBytes).to.equal(0);
  });

  it('lists texts with includeText and exports them', () => {
    const index = newIndex();
    index.upsert([
      { id: 'a', vector: [1, 0], text: 'alpha' },
      { id: 'b', vector: [0, 1] },
    ]);
    expect(JSON.parse(JSON.stringify(index.list({ limit: 10, includeText: true }).vectors))).to.deep.equal([
      { id: 'a', text: 'alpha' },
      { id: 'b', text: null },
    ]);
    expect(index.list({ limit: 10 }).vectors[0]).to.not.have.property('text');
    const exported = index.openExport();
    const all = exported.next(10);
    expect(all.map((v) => v.text?.value() ?? null)).to.deep.equal(['alpha', null]);
    exported.close();
  });

  it('an export opened before a text is replaced still yields the old text', () => {
    const index = newIndex();
    index.upsert([{ id: 'a', vector: [1, 0], text: 'old' }]);
    const exported = index.openExport();
    index.upsert([{ id: 'a', vector: [1, 0], text: 'new' }]);
    expect(exported.next(10).map((v) => v.text!.value())).to.deep.equal(['old']);
    exported.close();
  });
});
