// Random corpora for the text tests: words from a small vocabulary (so terms
// repeat across documents and within one), with capitals, punctuation and
// stop words the analyzers must handle, and texts without any term.
import { randomInt, type Rng } from '../../helpers/random.js';

const WORDS = [
  'apple',
  'Apples',
  'banana',
  'cherry',
  'dog',
  'dogs',
  'running',
  'runs',
  'fox',
  'the',
  'and',
  'of',
  'is',
  'café',
  'CAFE',
  'naïve',
  'wi-fi',
  "don't",
  '3.14',
  '1,000',
  'x',
  'zebra',
  'quick',
  'lazy',
  '東京都',
  'über',
  'Straße',
  'a',
  'to',
  'it',
];
const PUNCTUATION = [' ', ' ', ' ', ', ', '. ', '; ', ' - ', '\n', '! '];

/** A text of 0 to maxWords words (sometimes only punctuation or stop words). */
export function randomText(rng: Rng, maxWords = 20): string {
  const roll = rng();
  if (roll < 0.04) return '';
  if (roll < 0.08) return '... -- !';
  if (roll < 0.12) return 'the and of';
  const n = 1 + randomInt(rng, maxWords);
  let text = '';
  for (let i = 0; i < n; i++) text += WORDS[randomInt(rng, WORDS.length)] + PUNCTUATION[randomInt(rng, PUNCTUATION.length)];
  return text;
}

/** A query of 1 to 3 words from the vocabulary, sometimes one no text holds. */
export function randomQuery(rng: Rng): string {
  const n = 1 + randomInt(rng, 3);
  const words: string[] = [];
  for (let i = 0; i < n; i++) words.push(rng() < 0.1 ? 'unheard' : WORDS[randomInt(rng, WORDS.length)]);
  if (words.every((w) => ['the', 'and', 'of', 'is', 'a', 'to', 'it'].includes(w.toLowerCase()))) words.push('zebra');
  return words.join(' ');
}

/** A small integer vector (l2 distances then compare exactly). */
export function smallVector(rng: Rng, dim: number): number[] {
  return Array.from({ length: dim }, () => randomInt(rng, 7) - 3);
}
