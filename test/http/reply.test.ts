// replyJson: the text a reply() answer is sent as, the same as JSON.stringify of the envelope object.
import { expect } from 'chai';
import { replyJson } from '../../src/http/respond.js';

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
});
