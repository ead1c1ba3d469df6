// README.md stays short, and every relative link in it and in docs/ (experiments/ too, and the
// kernel's notes) reaches an existing file and, with a #fragment, a heading.
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCS = [
  'README.md',
  'assembly/README.md',
  ...['docs', 'docs/experiments'].flatMap((dir) =>
    readdirSync(join(ROOT, dir))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `${dir}/${f}`),
  ),
];

/** The text without fenced code blocks and inline code, where a link is not a link. */
const prose = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');

/** Targets of [text](target) and ![alt](target). */
const linksIn = (markdown: string) => [...prose(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]);

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');

const anchorsOf = (markdown: string) =>
  new Set(
    markdown
      .replace(/^```[\s\S]*?^```/gm, '')
      .split('\n')
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => slug(l.replace(/^#+ /, ''))),
  );

describe('documentation', () => {
  it('README.md has at most 300 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length;
    expect(lines).to.be.at.most(300);
  });

  it('docs/ holds the API, operations, performance, lifecycle and experiments', () => {
    for (const f of ['api', 'operations', 'performance', 'lifecycle', 'experiments/README']) expect(DOCS).to.include(`docs/${f}.md`);
  });

  it('every relative link in README.md and docs/*.md names an existing file', () => {
    const broken: string[] = [];
    let count = 0;
    for (const doc of DOCS) {
      for (const target of linksIn(readFileSync(join(ROOT, doc), 'utf8'))) {
        if (/^[a-z]+:/i.test(target) || target.startsWith('#')) continue;
        count++;
        const file = join(ROOT, dirname(doc), decodeURI(target.split('#')[0]));
        if (!existsSync(file)) broken.push(`${doc}: ${target}`);
      }
    }
    expect(count).to.be.greaterThan(10);
    expect(broken).to.deep.equal([]);
  });

  it('every #fragment of a link names a heading of the page it points to', () => {
    const broken: string[] = [];
    for (const doc of DOCS) {
      for (const target of linksIn(readFileSync(join(ROOT, doc), 'utf8'))) {
        if (/^[a-z]+:/i.test(target) || !target.includes('#')) continue;
        const [path, fragment] = target.split('#');
        const file = path === '' ? join(ROOT, doc) : join(ROOT, dirname(doc), decodeURI(path));
        if (!file.endsWith('.md') || !existsSync(file)) continue;
        if (!anchorsOf(readFileSync(file, 'utf8')).has(fragment)) broken.push(`${doc}: ${target} (${relative(ROOT, file)})`);
      }
    }
    expect(broken).to.deep.equal([]);
  });
});
