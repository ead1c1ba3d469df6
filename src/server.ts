// Start the service: listen, sweep expired sessions, stop cleanly on SIGTERM/SIGINT.
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig } from './config.js';
import { createApp } from './http/app.js';
import { createHttpServer } from './http/http-server.js';
import { ConnectionDrain } from './http/shutdown.js';
import { assertBudgetFits } from './limits/heap-limit.js';

/** The app, or exit 1 with a one-line message for a configuration that cannot work (a bad variable, a budget that cannot fit, an unusable DATA_DIR). */
function create() {
  try {
    const config = loadConfig();
    assertBudgetFits(config);
    return createApp({ config, deferRestore: true });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`tempvec: cannot start: ${err.message}`);
    process.exit(1);
  }
}

const { app, store, config, readiness, pool, restore } = create();
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
    flush();
    process.exit(0);
  });
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
