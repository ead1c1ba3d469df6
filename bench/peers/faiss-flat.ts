// FAISS (Debian's python3-faiss) for bench:peers, in a child process running
// bench/peers/faiss_flat.py: the vectors go over as raw float32 files, then
// the bench asks for timings and ids one JSON line at a time, so FAISS's
// rounds interleave with ours. The child times itself (no pipe in its figures).
import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

const SCRIPT = new URL('./faiss_flat.py', import.meta.url).pathname;
const INSTALL = 'apt-get install -y python3-faiss libopenblas0-pthread';

export interface FaissInfo {
  faiss: string;
  numpy: string;
  blasCore: string;
}

/** The Debian interpreter where python3-faiss lives, or why FAISS is skipped. */
function python(): { path: string } | { skip: string } {
  const path = ['/usr/bin/python3', '/usr/bin/python3.11'].find((p) => existsSync(p));
  if (!path) return { skip: `no /usr/bin/python3 (${INSTALL})` };
  const probe = spawnSync(path, ['-c', 'import faiss, numpy'], { encoding: 'utf8', env: childEnv() });
  if (probe.status !== 0) return { skip: `python3 cannot import faiss (${INSTALL})` };
  return { path };
}

/** This shell's OpenBLAS tuning is for other work: FAISS runs with OpenBLAS's own detection. */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.OPENBLAS_CORETYPE;
  delete env.OPENBLAS_L2_SIZE;
  return env;
}

export interface FaissThreads {
  omp: number;
  blas: number;
}

export class FaissFlat {
  private readonly answers: AsyncIterator<string>;

  private constructor(
    private readonly child: ChildProcessByStdio<Writable, Readable, null>,
    private readonly dir: string,
    readonly info: FaissInfo,
  ) {
    this.answers = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  }

  /** An IndexFlatIP over `vectors` (cosine: both sides go in at unit length), or why not. */
  static async start(vectors: Float32Array, queries: Float32Array, dim: number, k: number): Promise<FaissFlat | { skip: string }> {
    const py = python();
    if ('skip' in py) return py;
    const dir = mkdtempSync(join(tmpdir(), 'tempvec-faiss-'));
    const files = [join(dir, 'vectors.f32'), join(dir, 'queries.f32')];
    writeFileSync(files[0], new Uint8Array(vectors.buffer, vectors.byteOffset, vectors.byteLength));
    writeFileSync(files[1], new Uint8Array(queries.buffer, queries.byteOffset, queries.byteLength));
    const child = spawn(py.path, [SCRIPT, ...files, String(dim), String(k)], { env: childEnv(), stdio: ['pipe', 'pipe', 'inherit'] });
    const faiss = new FaissFlat(child, dir, { faiss: '', numpy: '', blasCore: '' });
    const ready = await faiss.next();
    Object.assign(faiss.info, { faiss: ready.faiss, numpy: ready.numpy, blasCore: ready.blasCore });
    return faiss;
  }

  private async next(): Promise<Record<string, any>> {
    const line = await this.answers.next();
    if (line.done) throw new Error(`FAISS child exited (code ${this.child.exitCode})`);
    return JSON.parse(line.value);
  }

  private async ask(request: object): Promise<Record<string, any>> {
    this.child.stdin.write(JSON.stringify(request) + '\n');
    return this.next();
  }

  /** Milliseconds per call of `calls` searches of the first `nq` queries, on `omp` OpenMP and `blas` OpenBLAS threads. */
  async time(nq: number, { omp, blas }: FaissThreads, calls: number): Promise<number> {
    return (await this.ask({ time: { nq, omp, blas, calls } })).ms;
  }

  /** The top-k rows of each of the first `nq` queries. */
  async ids(nq: number): Promise<number[][]> {
    return (await this.ask({ ids: { nq } })).ids;
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
