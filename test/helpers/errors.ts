import { expect } from 'chai';
import { ApiError } from '../../src/errors.js';

/** Run `fn`, expect it to throw an ApiError with `code`; returns the error. */
export function expectApiError(fn: () => unknown, code: string): ApiError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    expect((err as ApiError).code, (err as Error).message).to.equal(code);
    return err as ApiError;
  }
  throw new Error(`expected ${code}, nothing was thrown`);
}
