// The demo's text sample: markdown to passages of prose (scripts/demo-passages.ts),
// on a scratch tree written by hand, and on the real one.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoPassages } from '../../scripts/demo-passages.js';

describe('demo passages (scripts/demo-passages.ts)', () => {
  it('keeps prose by paragraph and list item, strips markdown, drops code, tables and short lines, cuts at three sentences', () => {
    const root = mkdtempSync(join(tmpdir(), 'tempvec-passages-'));
    mkdirSync(join(root, 'docs'));
    writeFileSync(
      join(root, 'README.md'),
      [
        '# Title',
        '',
        'A **bold** claim with a [link](docs/a.md) and `MAX_VECTORS` in code,',
        'wrapped over two lines of the same paragraph.',
        '',
        '```sh',
        'npm start   # a command, never a passage',
        '```',
        '',
        '| a | table |',
        '|---|---|',
        '',
        'Too short.',
      ].join('\n'),
    );
    writeFileSync(
      join(root, 'docs/a.md'),
      [
        '## Setup',
        '- One list item that is long enough to be a passage of its own.',
        '- Another list item, also long enough to be kept as a passage.',
        '',
        'One sentence here. Two sentences here. Three sentences here. Four sentences here and a few more words.',
      ].join('\n'),
    );
    writeFileSync(join(root, 'docs/pic.png'), 'not markdown');
    expect(demoPassages(root)).to.deep.equal([
      {
        id: 'README.md#1',
        text: 'A bold claim with a link and MAX_VECTORS in code, wrapped over two lines of the same paragraph.',
        metadata: { source: 'README.md', section: 'Title' },
      },
      { id: 'docs/a.md#1', text: 'One list item that is long enough to be a passage of its own.', metadata: { source: 'docs/a.md', section: 'Setup' } },
      { id: 'docs/a.md#2', text: 'Another list item, also long enough to be kept as a passage.', metadata: { source: 'docs/a.md', section: 'Setup' } },
      { id: 'docs/a.md#3', text: 'One sentence here. Two sentences here. Three sentences here.', metadata: { source: 'docs/a.md', section: 'Setup' } },
    ]);
  });

  it('samples the real README and docs into a few hundred unique passages without markdown', () => {
    const passages = demoPassages();
    expect(passages.length).to.be.within(100, 400);
    expect(new Set(passages.map((p) => p.id)).size).to.equal(passages.length);
    expect(passages.some((p) => p.metadata.source === 'README.md')).to.equal(true);
    for (const p of passages) expect(p.text, p.id).to.not.match(/```|\]\(|\*\*/);
  });
});
