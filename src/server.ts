// Start the service: listen, sweep expired sessions, stop cleanly on SIGTERM/SIGINT.
import { createApp } from './http/app.js';

const { app, store, config } = createApp();
store.startSweeper();
const server = app.listen(config.port, config.host, () => {
  console.log(`tempvec listening on http://${config.host}:${config.port}`);
});

function shutdown(signal: string) {
  console.log(`${signal}: finishing requests in flight, then exiting`);
  store.stopSweeper();
  server.close(() => process.exit(0));
  server.closeIdleConnections();
  setTimeout(() => process.exit(0), 10_000).unref();
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
