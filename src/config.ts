// Every limit and default of the service, read from the environment once.
// GET /limits, request validation, the OpenAPI document and the README table
// all read this module, so a limit is written down in exactly one place.
// Its parts, one job each, live in src/config/; everything is imported from here.
export * from './config/spec-limits.js';
export * from './config/variables.js';
export { defaultDataDirMaxBytes } from './config/machine-defaults.js';
export * from './config/load.js';
export * from './config/public-limits.js';
