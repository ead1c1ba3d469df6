// Texts analysed before the write turn (prepareTextsAhead): the turn takes
// them and answers as an inline analysis does, analyses again when the
// session's analyzer changed meanwhile, and the analysis yields to the event
// loop on a large batch.
import { expect } from 'chai';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { prepareTextsAhead } from '../../src/sessions/texts-ahead.js';

const newIndex = () => new VectorIndex(loadKernelModule(), 10_000);
const WORDS = ['running', 'runner', 'ran', 'the', 'blue', 'sea', 'apples', 'apple', "don't", 'état', '東京都'];
const records = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: `r${i}`,
    vector: [1, i % 7, 2],
    ...(i % 5 === 4 ? {} : { text: Array.from({ length: 150 }, (_, w) => WORDS[(i * 7 + w * 3) % WORDS.length]).join(' ') }),
  }));
const answers = (index: VectorIndex) => ['run', 'apple sea', '東京', 'etat'].map((q) => index.search(null, { queryTexts: [q], topK: 20 }).results[0]);

describe('texts analysed ahead of the write turn', () => {
  it('gives the index what an inline analysis gives', async () => {
    const batch = records(200);
    const inline = newIndex();
    inline.upsert(batch, { analyzer: 'english' });
    const ahead = newIndex();
    const preparedTexts = await prepareTextsAhead({ index: ahead, tokenHash: '' }, batch, { analyzer: 'english' });
    expect(preparedTexts!.analyzer).to.equal('english');
    expect(preparedTexts!.texts.filter((t) => t === null)).to.have.length(40);
    ahead.upsert(batch, { analyzer: 'english', preparedTexts });
    expect(answers(ahead)).to.deep.equal(answers(inline));
    expect(ahead.stats().text).to.deep.equal(inline.stats().text);
  });

  it('analyses again when the analyzer changed before the turn', async () => {
    const index = newIndex();
    const batch = records(20);
    const preparedTexts = await prepareTextsAhead({ index, tokenHash: '' }, batch, {});
    expect(preparedTexts!.analyzer).to.equal('standard');
    index.upsert([{ id: 'first', vector: [1, 1, 1], text: 'runs' }], { analyzer: 'english' });
    index.upsert(batch, { preparedTexts });
    const reference = newIndex();
    reference.upsert([{ id: 'first', vector: [1, 1, 1], text: 'runs' }], { analyzer: 'english' });
    reference.upsert(batch);
    expect(answers(index)).to.deep.equal(answers(reference));
  });

  it('leaves nothing for a batch without text, and yields to the event loop on a large one', async () => {
    expect(await prepareTextsAhead({ index: newIndex(), tokenHash: '' }, [{ id: 'a', vector: [1] }], {})).to.equal(undefined);
    let turns = 0;
    const tick = setInterval(() => turns++, 0);
    try {
      await prepareTextsAhead({ index: newIndex(), tokenHash: '' }, records(5000), {});
    } finally {
      clearInterval(tick);
    }
    expect(turns).to.be.above(0);
  });
});
