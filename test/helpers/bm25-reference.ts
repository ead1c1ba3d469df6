// A plain BM25 to check the inverted index against, written from the formula
// (Lucene >= 8, docs/lifecycle.md): for each distinct query term t in a
// document, idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl)), idf(t) =
// ln(1 + (N - df + 0.5) / (df + 0.5)); N and avgdl over the documents with at
// least one term. Ties by insertion order. Also RRF and linear fusion.
import { analyze, type AnalyzerName } from '../../src/index/text/analyzer.js';

export interface TextDoc {
  id: string;
  text: string;
  /** Insertion order: the tie-break. */
  seq: number;
}

export interface Scored {
  id: string;
  score: number;
}

const K1 = 1.2,
  B = 0.75;

/** Every document holding a query term, scored, best first (ties by seq); `keep` restricts the ranked ones, not N or avgdl. */
export function referenceBm25(docs: readonly TextDoc[], analyzer: AnalyzerName, query: string, keep: (id: string) => boolean = () => true): Scored[] {
  const terms = docs.map((doc) => analyze(analyzer, doc.text));
  const withTerms = terms.filter((t) => t.length > 0);
  const n = withTerms.length;
  const avgdl = withTerms.reduce((sum, t) => sum + t.length, 0) / n;
  const queryTerms = [...new Set(analyze(analyzer, query))];
  const out: (Scored & { seq: number })[] = [];
  docs.forEach((doc, i) => {
    if (!keep(doc.id)) return;
    let score = 0,
      matched = false;
    for (const term of queryTerms) {
      const tf = terms[i].filter((t) => t === term).length;
      if (tf === 0) continue;
      const df = terms.filter((t) => t.includes(term)).length;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      score += (idf * tf) / (tf + K1 * (1 - B + (B * terms[i].length) / avgdl));
      matched = true;
    }
    if (matched) out.push({ id: doc.id, score, seq: doc.seq });
  });
  out.sort((a, b) => b.score - a.score || a.seq - b.seq);
  return out.map(({ id, score }) => ({ id, score }));
}

export interface ReferenceFused extends Scored {
  vectorRank: number | null;
  textRank: number | null;
}

/** Fusion of two ranked lists (best first), from the definitions; `seqOf` breaks ties. */
export function referenceFuse(
  vector: Scored[],
  text: Scored[],
  fusion: { method: 'rrf'; k?: number } | { method: 'linear'; alpha?: number },
  lowerIsBetter: boolean,
  seqOf: (id: string) => number,
): ReferenceFused[] {
  const ids = [...new Set([...vector.map((h) => h.id), ...text.map((h) => h.id)])];
  const norm = (list: Scored[], invert: boolean) => {
    const scores = list.map((h) => h.score);
    const min = Math.min(...scores),
      max = Math.max(...scores);
    return (s: number) => (max === min ? 1 : invert ? (max - s) / (max - min) : (s - min) / (max - min));
  };
  const vNorm = norm(vector, lowerIsBetter),
    tNorm = norm(text, false);
  const out = ids.map((id) => {
    const vi = vector.findIndex((h) => h.id === id),
      ti = text.findIndex((h) => h.id === id);
    let score: number;
    if (fusion.method === 'rrf') {
      const k = fusion.k ?? 60;
      score = (vi < 0 ? 0 : 1 / (k + vi + 1)) + (ti < 0 ? 0 : 1 / (k + ti + 1));
    } else {
      const alpha = fusion.alpha ?? 0.5;
      score = alpha * (vi < 0 ? 0 : vNorm(vector[vi].score)) + (1 - alpha) * (ti < 0 ? 0 : tNorm(text[ti].score));
    }
    return { id, score, vectorRank: vi < 0 ? null : vi + 1, textRank: ti < 0 ? null : ti + 1 };
  });
  return out.sort((a, b) => b.score - a.score || seqOf(a.id) - seqOf(b.id));
}

/**
 * Assert `actual` is the reference ranking `expected`: the same length, each
 * score within 1e-6 of the reference's for its id, and at every rank the
 * reference's id, or one whose score ties it to 1e-9 (float64 sums of the same
 * terms in another form may differ in the last bit, and ties go by seq).
 */
export function expectSameRanking(actual: readonly Scored[], expected: readonly Scored[], label: string): void {
  const scoreOf = new Map(expected.map((h) => [h.id, h.score]));
  const detail = `${label}\n  actual   ${JSON.stringify(actual)}\n  expected ${JSON.stringify(expected)}`;
  if (actual.length !== expected.length) throw new Error(`length differs: ${detail}`);
  actual.forEach((hit, rank) => {
    const reference = scoreOf.get(hit.id);
    if (reference === undefined || Math.abs(hit.score - reference) > 1e-6) throw new Error(`rank ${rank} ${hit.id}: ${detail}`);
    if (hit.id !== expected[rank].id && Math.abs(reference - expected[rank].score) > 1e-9) throw new Error(`rank ${rank} ${hit.id}: ${detail}`);
  });
}
