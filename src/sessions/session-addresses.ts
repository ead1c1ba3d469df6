// Live sessions per client address (MAX_SESSIONS_PER_ADDRESS): which address
// each session was created from, as a hash of its rate-limit key (an IPv4
// address, an IPv6 /64: rate-limit.ts clientKey), and how many each holds.
// Sessions on disk not yet reopened count too, so with DATA_DIR the pairs are
// kept beside the logs in one small file, `addresses` (lines of
// "<token hash> <address hash>"): appended when a session is created, written
// anew from the live pairs when the sessions are listed after a start and
// whenever it holds twice as many lines as live pairs (removed once none is
// left). The logs' format is
// untouched; a session without a line (one created before this file, or
// whose line a power loss took) counts for no address.
import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The sidecar's name in DATA_DIR (not a log's name: the journal's scan passes it by). */
export const ADDRESSES_FILE = 'addresses';

const LINE = /^([0-9a-f]{64}) ([0-9a-f]{32})$/;

/** The hash a client address key is kept as (never the address itself). */
export function addressHash(clientKey: string): string {
  return createHash('sha256').update(`tempvec-address:${clientKey}`).digest('hex').slice(0, 32);
}

export class SessionAddresses {
  /** Token hash -> address hash. */
  private readonly addressOf = new Map<string, string>();
  /** Address hash -> token hashes of its live sessions. */
  private readonly byAddress = new Map<string, Set<string>>();
  /** Lines in the file (with DATA_DIR), to know when to write it anew. */
  private lines = 0;
  private readonly path: string | undefined;
  private warned = false;

  constructor(dataDir: string) {
    this.path = dataDir === '' ? undefined : join(dataDir, ADDRESSES_FILE);
  }

  /** Live sessions created from `address`. */
  count(address: string): number {
    return this.byAddress.get(address)?.size ?? 0;
  }

  /** The token hashes of `address`'s sessions (a copy: the caller may expire some). */
  sessionsOf(address: string): string[] {
    return [...(this.byAddress.get(address) ?? [])];
  }

  /** A new session of `address`: counted, and its line appended to the file. */
  add(tokenHash: string, address: string): void {
    this.track(tokenHash, address);
    if (!this.path) return;
    this.lines++;
    this.quietly(() => appendFileSync(this.path!, `${tokenHash} ${address}\n`, { mode: 0o600 }));
    if (this.lines > 2 * this.addressOf.size + 1024) this.rewrite();
  }

  /** The session left (expired, reset away, set aside): its address has room again. */
  remove(tokenHash: string): void {
    const address = this.addressOf.get(tokenHash);
    if (address === undefined) return;
    this.addressOf.delete(tokenHash);
    const set = this.byAddress.get(address);
    set?.delete(tokenHash);
    if (set?.size === 0) this.byAddress.delete(address);
    // The last session gone: no file is left behind.
    if (this.addressOf.size === 0 && this.lines > 0) this.rewrite();
  }

  /** After the sessions on disk were listed: the pairs of those still there, and the file written anew with them. */
  load(onDisk: ReadonlySet<string> | Map<string, unknown>): void {
    if (!this.path) return;
    this.takeFrom(this.quietly(() => readFileSync(this.path!, 'utf8')) ?? '', onDisk);
  }

  /** load() reading the file without blocking. */
  async loadAsync(onDisk: ReadonlySet<string> | Map<string, unknown>): Promise<void> {
    if (!this.path) return;
    let text = '';
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      this.report(err);
    }
    this.takeFrom(text, onDisk);
  }

  private takeFrom(text: string, onDisk: ReadonlySet<string> | Map<string, unknown>): void {
    for (const line of text.split('\n')) {
      const match = LINE.exec(line);
      if (match && onDisk.has(match[1]) && !this.addressOf.has(match[1])) this.track(match[1], match[2]);
    }
    this.rewrite();
  }

  private track(tokenHash: string, address: string): void {
    this.addressOf.set(tokenHash, address);
    let set = this.byAddress.get(address);
    if (!set) {
      set = new Set();
      this.byAddress.set(address, set);
    }
    set.add(tokenHash);
  }

  /** The file from the live pairs: written beside it, then renamed over it; none without pairs. */
  private rewrite(): void {
    const path = this.path;
    if (!path) return;
    this.lines = this.addressOf.size;
    if (this.addressOf.size === 0) {
      this.quietly(() => rmSync(path, { force: true }));
      return;
    }
    const text = [...this.addressOf].map(([token, address]) => `${token} ${address}\n`).join('');
    this.quietly(() => {
      writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
      renameSync(`${path}.tmp`, path);
    });
  }

  /** Best effort: without the file, sessions on disk count for no address after a restart; nothing is refused for it. */
  private quietly<T>(io: () => T): T | undefined {
    try {
      return io();
    } catch (err) {
      this.report(err);
      return undefined;
    }
  }

  private report(err: unknown): void {
    if ((err as { code?: string }).code === 'ENOENT' || this.warned) return;
    this.warned = true;
    console.error(`tempvec: the sessions' addresses file (${ADDRESSES_FILE} in DATA_DIR) could not be read or written: ${(err as Error).message}`);
  }
}
