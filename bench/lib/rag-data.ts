// The metadata of a bench:rag chunk: what TempvecVectorStore writes for a
// LangChain document, its ~1 KB text beside the document's fields.

const WORDS =
  'the of and to in is that for it as with was on be by this are or from at which an have not but had all were they one their has been more can also its will about if other into some these only may would than most such after first two new used many well between over where both however during each'.split(
    ' ',
  );
const SOURCES = 200;

/** About 1 KB of text for chunk i: words from a fixed list, in an order of its own. */
function chunkText(i: number): string {
  let text = '';
  let x = (i * 2654435761) >>> 0;
  while (text.length < 1000) {
    x = (x * 1103515245 + 12345) >>> 0;
    text += WORDS[x % WORDS.length] + ' ';
  }
  return text.trimEnd();
}

/** A chunk's metadata as TempvecVectorStore writes it: its text beside the document's fields. */
export function chunkMetadata(i: number): Record<string, unknown> {
  const metadata: Record<string, unknown> = {
    text: chunkText(i),
    source: `docs/report-${i % SOURCES}.pdf`,
    page: (i >> 4) % 300,
    chunk: i,
    loc: { lines: { from: (i % 40) * 25 + 1, to: (i % 40) * 25 + 24 } },
    hash: ((i * 2654435761) >>> 0).toString(16),
  };
  for (let k = 0; k < 35; k++) metadata[`field${k}`] = k % 3 === 0 ? (i * (k + 1)) % (k + 7) : `v${(i + k) % (k + 5)}`;
  return metadata;
}
