// The cap on texts being embedded or waiting, per owner (a token's hash) and
// in all, shared by both embedders (the builtin pool, an endpoint): a call
// past either is refused at once with 503 EMBEDDING_BUSY, never queued.
import { apiError } from '../errors.js';
import { Tally } from '../limits/tally.js';

export interface TextsInFlightLimits {
  /** Texts of one owner being embedded or waiting, at most. */
  textsInFlightPerToken: number;
  /** Texts of all owners being embedded or waiting, at most. */
  textsInFlight: number;
}

export class TextsInFlight {
  private readonly texts = new Tally();

  constructor(private readonly limits: TextsInFlightLimits) {}

  get total(): number {
    return this.texts.total;
  }

  /** Count `count` texts in flight for `owner`, or refuse the call (503 EMBEDDING_BUSY). */
  admit(count: number, owner: string): void {
    const mine = this.texts.of(owner);
    const { textsInFlightPerToken, textsInFlight } = this.limits;
    if (mine + count > textsInFlightPerToken) throw embeddingBusy('token', mine, count, textsInFlightPerToken);
    if (this.texts.total + count > textsInFlight) throw embeddingBusy('server', this.texts.total, count, textsInFlight);
    this.texts.add(owner, count);
  }

  /** The call's texts are done (embedded or failed). */
  release(count: number, owner: string): void {
    this.texts.remove(owner, count);
  }
}

function embeddingBusy(scope: 'token' | 'server', inFlight: number, asked: number, limit: number) {
  return apiError(
    'EMBEDDING_BUSY',
    `${scope === 'token' ? 'this token' : 'the server'} has ${inFlight} texts being embedded; ${asked} more would pass its limit of ${limit}; nothing was embedded, try again shortly`,
    { scope, textsInFlight: inFlight, textsAsked: asked, limit },
    { 'Retry-After': '1' },
  );
}
