// A session rebuilt from log records the way a restart does it: the records
// written as a log file (in memory, on PowerLossFs with no power loss) and
// reopened by SessionJournal.reopen, the replay production runs.
import { encodeRecordV2, fileHeader, type RecordV2 } from '../../../src/sessions/persistence/records-v2.js';
import { SessionJournal, type ReopenOutcome, type RestoreReport } from '../../../src/sessions/persistence/session-journal.js';
import type { Session } from '../../../src/sessions/session.js';
import { PowerLossFs } from '../../helpers/power-loss-fs.js';

const DIR = '/restore';
const HASH = 'f'.repeat(64);

/** A log file's bytes: the file header, then the records. */
export function logBytes(records: readonly RecordV2[]): Buffer {
  return Buffer.concat([fileHeader(), ...records.map((record, i) => encodeRecordV2(record, i + 1))]);
}

export async function restoreBytes(bytes: Buffer, make: (sessionId: string, createdAt: number) => Session): Promise<Session> {
  const fs = new PowerLossFs(DIR, () => 0, new Map([[`${HASH}.log`, bytes]]));
  const restored = reopened(await new SessionJournal(DIR, 60_000, { fs }).reopen(HASH, make));
  if (!restored) throw new Error('the log holds no whole record');
  return restored.session;
}

export function restoreLog(records: readonly RecordV2[], make: (sessionId: string, createdAt: number) => Session): Promise<Session> {
  return restoreBytes(logBytes(records), make);
}

/** A reopen's session and report; null for a log with no whole record; a failed reopen's error thrown. */
export function reopened(outcome: ReopenOutcome): { session: Session; report: RestoreReport } | null {
  if (outcome.t === 'reopened') return outcome;
  if (outcome.t === 'empty') return null;
  throw outcome.error;
}
