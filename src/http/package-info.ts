// Name, version, description and license of the service, from package.json.
import { readFileSync } from 'node:fs';

export const packageInfo = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
  description: string;
  /** An SPDX expression, or npm's UNLICENSED: no license is granted. */
  license?: string;
};
