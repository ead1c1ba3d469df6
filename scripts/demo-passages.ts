// The demo's text sample: README.md and docs/*.md split into passages of
// plain prose (markdown stripped, code blocks and tables dropped, at most
// three sentences each), written to build/demo-passages.json, which the
// server serves at /demo/passages.json for the demo page's "text" mode.
//
//   node --import tsx scripts/demo-passages.ts
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = new URL('../', import.meta.url).pathname;
const OUTPUT = 'build/demo-passages.json';
/** Logs of measurements (mostly tables and figures), not prose to search. */
const SKIPPED = new Set(['docs/performance-history.md']);
/** Enough to search by meaning, few enough to embed in a few seconds. */
const MAX_PASSAGES = 400;
const MAX_SENTENCES = 3;
/** Shorter paragraphs are captions and labels. */
const MIN_CHARS = 60;

interface Passage {
  id: string;
  text: string;
  metadata: { source: string; section: string };
}

/** Inline markdown to plain text: links and images by their words, code spans and * emphasis unmarked (an _ is part of NAMES_LIKE_THIS). */
function plain(line: string): string {
  return line
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|\*)(\S(?:.*?\S)?)\1/g, '$2')
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Sentences end at . ! ? followed by a space and a capital, a digit or a quote. */
function sentences(paragraph: string): string[] {
  return paragraph.split(/(?<=[.!?])\s+(?=[A-Z0-9"'(])/).filter((s) => s.length > 0);
}

/** The paragraphs of a markdown file with the heading above each; code blocks, tables and headings themselves dropped. */
function paragraphs(markdown: string): { section: string; text: string }[] {
  const out: { section: string; text: string }[] = [];
  let section = '';
  let lines: string[] = [];
  let fenced = false;
  const flush = () => {
    const text = plain(lines.join(' '));
    if (text.length > 0) out.push({ section, text });
    lines = [];
  };
  for (const raw of markdown.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('```')) {
      flush();
      fenced = !fenced;
    } else if (fenced) {
    } else if (line.startsWith('#')) {
      flush();
      section = plain(line.replace(/^#+\s*/, ''));
    } else if (line === '' || line.startsWith('|') || line.startsWith('<!--') || line.startsWith('>')) {
      flush();
    } else if (/^([-*+]|\d+\.)\s/.test(line)) {
      // Each list item is a paragraph of its own.
      flush();
      lines.push(line.replace(/^([-*+]|\d+\.)\s+/, ''));
    } else {
      lines.push(line);
    }
  }
  flush();
  return out;
}

/** One file's passages: each paragraph, cut into runs of at most MAX_SENTENCES sentences. */
function passagesOf(source: string, markdown: string): Passage[] {
  const out: Passage[] = [];
  for (const { section, text } of paragraphs(markdown)) {
    const parts = sentences(text);
    for (let i = 0; i < parts.length; i += MAX_SENTENCES) {
      const chunk = parts.slice(i, i + MAX_SENTENCES).join(' ');
      if (chunk.length >= MIN_CHARS) out.push({ id: `${source}#${out.length + 1}`, text: chunk, metadata: { source, section } });
    }
  }
  return out;
}

/** README.md then docs/*.md in name order, at most MAX_PASSAGES, each file's share in proportion to its length. */
export function demoPassages(root = ROOT): Passage[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  const all = ['README.md', ...docs].filter((file) => !SKIPPED.has(file)).map((file) => passagesOf(file, readFileSync(join(root, file), 'utf8')));
  const total = all.reduce((n, list) => n + list.length, 0);
  const share = Math.min(1, MAX_PASSAGES / total);
  // Evenly spaced within each file, so every part of it is sampled.
  return all.flatMap((list) => {
    const keep = Math.floor(list.length * share);
    return Array.from({ length: keep }, (_, i) => list[Math.floor((i * list.length) / keep)]);
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const passages = demoPassages();
  writeFileSync(join(ROOT, OUTPUT), `${JSON.stringify(passages)}\n`);
  console.log(`${OUTPUT}: ${passages.length} passages`);
}
