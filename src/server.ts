// Start the service: listen, sweep expired sessions, stop cleanly on SIGTERM/SIGINT.
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig } from './config.js';
import { createApp } from './http/app.js';
import { createHttpServer } from './http/http-server.js';
import { ConnectionDrain } from './http/shutdown.js';
import { assertBudgetFits } from './limits/heap-limit.js';
import { awaitStaleLock, onDirLockLost } from './sessions/persistence/dir-lock.js';

/** The app, or exit 1 with a one-line message for a configuration that cannot work (a bad variable, a budget that cannot fit, an unusable DATA_DIR). */
async function create() {
  try {
    const config = loadConfig();
    assertBudgetFits(config);
    // A lock left by a container just killed is waited out, not refused (dir-lock.ts).
    if (config.dataDir) await awaitStaleLock(config.dataDir, config.lockStaleMs, (line) => console.log(line));
    return createApp({ config, deferRestore: true });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`tempvec: cannot start: ${err.message}`);
    process.exit(1);
  }
}

const { app, store, config, readiness, pool, embedder, restore } = await create();
// Another process took DATA_DIR (it judged this one gone): writing on would interleave with it.
onDirLockLost((message) => {
  console.error(`tempvec: ${message}; exiting`);
  process.exit(1);
});
pool?.warm();
store.startSweeper();
// Listen first, then list the sessions on disk: /readyz answers 503 until
// that is done, and the start-up line is printed once it is.
const server = createHttpServer(app, config);
const connections = new ConnectionDrain(server);
server.listen(config.port, config.host, () => {
  const { port } = server.address() as AddressInfo;
  restore().then(
    () => {
      console.log(
        `tempvec listening on http://${config.host}:${port}${config.instanceId ? ` as instance ${config.instanceId}` : ''}${config.dataDir ? ` (sessions persisted in ${config.dataDir})` : ''}`,
      );
    },
    (err) => {
      console.error('could not list the sessions in DATA_DIR:', err);
      process.exit(1);
    },
  );
});

let stopping = false;

/** Write the sessions' last accesses (DATA_DIR); a failure is reported, not a reason to hang. */
function flush() {
  try {
    store.flush();
  } catch (err) {
    console.error('could not write the last accesses of the sessions:', err);
  }
}

function shutdown(signal: string) {
  if (stopping) {
    console.log(`${signal} again: exiting now`);
    process.exit(1);
  }
  stopping = true;
  readiness.shuttingDown = true;
  console.log(`${signal}: finishing requests in flight, then exiting`);
  store.stopSweeper();
  connections.drain(config.shutdownDrainMs).then(async (outcome) => {
    if (outcome === 'cut') console.error(`answers still in flight after SHUTDOWN_DRAIN_MS (${config.shutdownDrainMs} ms) were cut`);
    await pool?.close();
    await embedder.close();
    flush();
    process.exit(0);
  });
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
// Started by a launcher (npm start, npm run cluster) with an IPC channel: when the launcher dies,
// even by SIGKILL, the channel closes and the server drains and exits rather than run on orphaned.
if (process.send) {
  process.on('disconnect', () => {
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {}); // a pipe to a dead launcher
    shutdown('launcher gone');
  });
}
