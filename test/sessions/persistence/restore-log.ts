// A session rebuilt from log entries the way a restart does it: the entries
// written as a log file (in memory, on PowerLossFs with no power loss) and
// reopened by SessionJournal.restore, the replay production runs.
import { encodeRecord } from '../../../src/sessions/persistence/records.js';
import { SessionJournal, type LogEntry } from '../../../src/sessions/persistence/session-journal.js';
import type { Session } from '../../../src/sessions/session.js';
import { PowerLossFs } from '../../helpers/power-loss-fs.js';

const DIR = '/restore';
const HASH = 'f'.repeat(64);

export async function restoreLog(entries: readonly LogEntry[], make: (sessionId: string, createdAt: number) => Session): Promise<Session> {
  const fs = new PowerLossFs(DIR, () => 0, new Map([[`${HASH}.log`, Buffer.concat(entries.map((entry) => encodeRecord(entry)))]]));
  const restored = await new SessionJournal(DIR, 60_000, { fs }).restore(HASH, make);
  if (!restored) throw new Error('the log holds no whole record');
  return restored.session;
}
