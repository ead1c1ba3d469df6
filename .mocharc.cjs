// mocha's configuration (npm test). On a machine without Debian's Chromium or
// nginx (npm test's pretest, scripts/test-setup.sh, installs them where it
// may), the tests that drive them are left out, and a line says which and why;
// under CI they run, and fail.
const { existsSync } = require('node:fs');
const { delimiter, join } = require('node:path');

/** nginx where src/cluster/launcher.ts's findNginx looks for it. */
const hasNginx = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'].some((dir) => dir && existsSync(join(dir, 'nginx')));

const ignore = [];
if (!process.env.CI && !existsSync('/usr/bin/chromium')) {
  ignore.push('test/browser/**');
  console.error('mocha: skipping test/browser: no /usr/bin/chromium (apt-get install chromium)');
}
if (!process.env.CI && !hasNginx) {
  ignore.push('test/cluster/cluster.test.ts', 'test/cluster/launcher.test.ts');
  console.error('mocha: skipping test/cluster/cluster.test.ts and launcher.test.ts: no nginx (apt-get install nginx)');
}

module.exports = {
  spec: ['test/**/*.test.ts'],
  ignore,
  'node-option': ['import=tsx'],
  timeout: 20000,
  reporter: 'dot',
};
