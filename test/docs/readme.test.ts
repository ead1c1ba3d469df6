// The generated tables say what src/config.ts (README) and src/errors.ts (docs/api.md) say.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { CONFIG_VARIABLES } from '../../src/config.js';
import { ERROR_CODES } from '../../src/errors.js';
import { API_PATH, configTable, errorTable, README_PATH, tableIn } from '../../scripts/doc-tables.js';

describe('README', () => {
  const readme = readFileSync(README_PATH, 'utf8');

  it('configuration table equals the one generated from CONFIG_VARIABLES (npm run docs)', () => {
    expect(tableIn(readme, 'config-table'), 'run npm run docs').to.equal(configTable());
  });

  it('the error table of docs/api.md equals the one generated from ERROR_CODES (npm run docs)', () => {
    expect(tableIn(readFileSync(API_PATH, 'utf8'), 'error-table'), 'run npm run docs').to.equal(errorTable());
  });

  it('the tables list every variable and every code with its status', () => {
    for (const [name] of CONFIG_VARIABLES) expect(configTable()).to.include(`| \`${name}\` |`);
    for (const [code, status] of Object.entries(ERROR_CODES)) expect(errorTable()).to.include(`| ${status} | \`${code}\` |`);
  });
});
