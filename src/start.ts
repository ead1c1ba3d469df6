// npm start: check the configuration, then run the server in a child Node
// whose heap limit is set from the memory budget (limits/heap-limit.ts), and
// pass signals and the exit code through.
import { spawn } from 'node:child_process';
import { ConfigError, loadConfig } from './config.js';
import { assertBudgetFits, heapLimitMiB } from './limits/heap-limit.js';

/** The server's Node flags besides the heap limit: this launcher's own (package.json; docs/operations.md, "The server's Node flag"). */
const NODE_FLAGS = process.execArgv.filter((flag) => !flag.startsWith('--max-old-space-size'));

function flags(): string[] {
  try {
    const config = loadConfig();
    assertBudgetFits(config);
    const heap = heapLimitMiB(config);
    return heap === null ? NODE_FLAGS : [...NODE_FLAGS, `--max-old-space-size=${heap}`];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`tempvec: cannot start: ${err.message}`);
    process.exit(1);
  }
}

// The IPC channel is how the server learns this launcher is gone (even SIGKILLed): it closes, and the server exits.
const server = spawn(process.execPath, [...flags(), new URL('./server.js', import.meta.url).pathname], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'] });
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => server.kill(signal));
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
