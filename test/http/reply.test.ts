// replyJson: the text a reply() answer is sent as, the same as JSON.stringify of the envelope object.
import { expect } from 'chai';
import { holdsStoredMetadata } from '../../src/http/answer-stream.js';
import { replyJson } from '../../src/http/respond.js';
import { MetadataJson } from '../../src/index/metadata/metadata-json.js';
import { seededRng } from '../helpers/random.js';

const stored = (value: unknown) => new MetadataJson(new TextEncoder().encode(JSON.stringify(value)));

describe('replyJson', () => {
  const session = { sessionId: 's', createdAt: '2026-01-01T00:00:00.000Z', ttlMsRemaining: 5, config: { dimensions: null, metric: null } };
  const shapes: Record<string, unknown>[] = [
    {},
    { metrics: { requestLatencyMs: 0.5 } },
    {
      results: [
        { id: 'a"\u2028', score: 0.1 },
        { id: 'b', score: -1, metadata: { k: [1, null, 'x'] } },
      ],
      stats: { exact: true },
      metrics: { requestLatencyMs: 1, searchMs: 0.25 },
    },
    { skipped: undefined, vector: [0.1, 2], metrics: { requestLatencyMs: 3 } },
  ];

  it('equals JSON.stringify({ success: true, session, ...fields })', () => {
    for (const fields of shapes) {
      const label = JSON.stringify(fields);
      expect(replyJson({ fields, sessionJson: JSON.stringify(session) }), label).to.equal(JSON.stringify({ success: true, session, ...fields }));
    }
  });

  it('equals JSON.stringify({ success: true, ...fields }) without a session', () => {
    for (const fields of shapes) expect(replyJson({ fields }), JSON.stringify(fields)).to.equal(JSON.stringify({ success: true, ...fields }));
  });

  it('splices stored metadata (MetadataJson) at any depth, and says whether a reply holds any', () => {
    const rng = seededRng(12);
    const value = (depth: number): unknown => {
      const r = rng();
      if (r < 0.15) return stored({ t: 'é"\u2028', n: Math.floor(r * 100) });
      if (depth > 4 || r < 0.45) return [1.5, 'x', null, true, undefined][Math.floor(rng() * 5)];
      if (r < 0.7) return Array.from({ length: Math.floor(rng() * 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(rng() * 4) }, (_, k) => [`k${k}`, value(depth + 1)]));
    };
    const seen = { holds: 0, none: 0 };
    for (let n = 0; n < 400; n++) {
      const fields = { results: value(1), stats: { exact: true } };
      expect(replyJson({ fields }), JSON.stringify(fields)).to.equal(JSON.stringify({ success: true, ...fields }));
      seen[holdsStoredMetadata(fields) ? 'holds' : 'none']++;
    }
    expect(seen.holds).to.be.greaterThan(50);
    expect(seen.none).to.be.greaterThan(50);
    expect(holdsStoredMetadata({ results: [{ id: 'a', metadata: stored({ k: 1 }) }] })).to.equal(true);
    expect(holdsStoredMetadata({ results: [[{ id: 'a', score: 1, metadata: stored({}) }]] })).to.equal(true);
    expect(holdsStoredMetadata({ results: [{ id: 'a', score: 1, metadata: { k: 1 } }], vector: [1, 2] })).to.equal(false);
  });
});
