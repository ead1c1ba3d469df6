// The served OpenAPI document passes two third-party linters with no error
// and no warning: Spectral (spectral:oas, .spectral.yaml) and Redocly
// (recommended, redocly.yaml), both run as their CLIs from node_modules.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { useServer } from '../helpers/http.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = fileURLToPath(new URL('../../test-output/openapi/', import.meta.url));
const run = promisify(execFile);

/** Run a CLI from node_modules/.bin; a non-zero exit still yields its output. */
async function cli(name: string, args: string[]): Promise<string> {
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  try {
    return (await run(`${ROOT}node_modules/.bin/${name}`, args, { cwd: ROOT, env, maxBuffer: 64 << 20 })).stdout;
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    if (!stdout) throw new Error(`${name} failed: ${stderr}`);
    return stdout;
  }
}

describe('OpenAPI document under third-party linters', function () {
  this.timeout(120_000);
  const api = useServer();
  let file: string;

  before(async () => {
    mkdirSync(OUT, { recursive: true });
    file = `${OUT}openapi.json`;
    writeFileSync(file, (await api.get('/openapi.json')).text);
  });

  it('spectral lint (spectral:oas): no error, no warning', async () => {
    const results = JSON.parse(
      (await cli('spectral', ['lint', file, '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet', '--fail-severity', 'hint'])) || '[]',
    );
    expect(results.map((r: { code: string; message: string; path: string[] }) => `${r.code}: ${r.message} at ${r.path.join('.')}`)).to.deep.equal([]);
  });

  it('redocly lint (recommended): no error, no warning', async () => {
    const report = JSON.parse(await cli('redocly', ['lint', file, '--config', 'redocly.yaml', '--format', 'json']));
    const problems = report.problems.map((p: { ruleId: string; message: string }) => `${p.ruleId}: ${p.message}`);
    expect({ ...report.totals, problems }).to.deep.equal({ errors: 0, warnings: 0, ignored: 0, problems: [] });
  });
});
