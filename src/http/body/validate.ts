// Step 6, in the route: the parsed body against its valibot schema.
import type { Context } from 'koa';
import * as v from 'valibot';
import { type AddManySchemas, safeParseAddManyInGroups } from '../../schemas/checked-batch.js';
import { REQUEST_SLICE_MS, Slices } from '../../limits/slices.js';
import { requestError } from '../../schemas/request-error.js';
import { turnOwnerOf } from '../context.js';

/** Validate the body against `schema`; throws VALIDATION_ERROR or BATCH_TOO_LARGE with every issue's path. */
export function parseBody<S extends v.GenericSchema>(ctx: Context, schema: S): v.InferOutput<S> {
  const result = v.safeParse(schema, ctx.request.body ?? {});
  if (result.success) return result.output;
  throw requestError(result.issues);
}

/** add-many's body: a batch the body reader checked has the rest validated (checked-batch.ts, a group of records at a time), any other body all of it. */
export async function parseAddManyBody(ctx: Context, schemas: AddManySchemas) {
  // A large batch's records are checked a group at a time, the loop given back between (REQUEST_SLICE_MS).
  const slices = new Slices(REQUEST_SLICE_MS, { waitBehind: true, owner: turnOwnerOf(ctx) });
  const result = await safeParseAddManyInGroups(schemas, ctx.request.body ?? {}, () => slices.pause());
  if (result.success) return result.output;
  throw requestError(result.issues);
}
