// The metadata a merge patch (POST /vectors/metadata/patch) gives, held to
// the limits of metadata/set. Environment-free: the server and LocalIndex
// answer the same VALIDATION_ERROR, its paths under /patch.
import * as v from 'valibot';
import { ApiError } from '../errors.js';
import type { Metadata } from '../index/filter.js';
import { mergePatch } from '../index/merge-patch.js';
import type { RequestSchemas } from './index.js';
import { requestError } from './request-error.js';

export function patchedMetadata(schemas: Pick<RequestSchemas, 'PatchedMetadataSchema'>, current: Metadata, patch: Metadata): Metadata {
  const result = v.safeParse(schemas.PatchedMetadataSchema, mergePatch(current, patch));
  if (result.success) return result.output;
  const err = requestError(result.issues, 'patched metadata');
  const issues = (err.details!.issues as { path: string; message: string }[]).map((issue) => ({ path: '/patch' + issue.path, message: issue.message }));
  return fail(new ApiError(err.status, err.code, `the metadata this patch gives is invalid: ${issues[0].path}: ${issues[0].message}`, { issues }));
}

function fail(err: ApiError): never {
  throw err;
}
