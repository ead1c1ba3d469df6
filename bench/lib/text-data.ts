// The documents of bench:text: chunks of about 150 words (~1 KB) of
// English-like text, words drawn from a Zipf distribution over a made-up
// vocabulary, a third of them English stop words, in sentences; and 3-term
// keyword queries of mid-frequency words. Deterministic (seeded).
import { rng as prng } from './data.js';

const STOP = 'the of and to in is that for it as with was on be by this are or from at which an have not but had all were they one their has been'.split(' ');
const SYLLABLES = 'ka ri to mo na lu se vi pa do re mi fa sol la ti ban cor del fin gar hol jun kel lam nor pel quo ras tur vel win yar zen'.split(' ');
const VOCABULARY = 30_000;

function makeVocabulary(): string[] {
  const random = prng(7);
  const seen = new Set<string>();
  const words: string[] = [];
  while (words.length < VOCABULARY) {
    const parts = 2 + Math.floor(random() * 2);
    let word = '';
    for (let p = 0; p < parts; p++) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    if (!seen.has(word)) {
      seen.add(word);
      words.push(word);
    }
  }
  return words;
}

export const vocabulary = makeVocabulary();

/** Cumulative Zipf (s = 1) weights over the vocabulary's ranks. */
const cumulative = (() => {
  const out = new Float64Array(VOCABULARY);
  let sum = 0;
  for (let r = 0; r < VOCABULARY; r++) out[r] = sum += 1 / (r + 1);
  for (let r = 0; r < VOCABULARY; r++) out[r] /= sum;
  return out;
})();

function zipfWord(random: () => number): string {
  const x = random();
  let lo = 0,
    hi = VOCABULARY - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return vocabulary[lo];
}

/** Document i: about 150 words in sentences of 8 to 20. */
export function documentText(i: number, words = 150): string {
  const random = prng(1_000_003 * (i + 1));
  const sentences: string[] = [];
  let count = 0;
  while (count < words) {
    const length = Math.min(words - count, 8 + Math.floor(random() * 13));
    const sentence: string[] = [];
    for (let w = 0; w < length; w++) sentence.push(random() < 0.33 ? STOP[Math.floor(random() * STOP.length)] : zipfWord(random));
    sentence[0] = sentence[0][0].toUpperCase() + sentence[0].slice(1);
    sentences.push(sentence.join(' ') + (random() < 0.2 ? ',' : '.'));
    count += length;
  }
  return sentences.join(' ');
}

/** `count` queries of 3 words of vocabulary ranks 50 to 5,000 (each in some hundreds of documents of 50k). */
export function keywordQueries(count: number, seed = 99): string[] {
  const random = prng(seed);
  return Array.from({ length: count }, () => Array.from({ length: 3 }, () => vocabulary[50 + Math.floor(random() * 4950)]).join(' '));
}
