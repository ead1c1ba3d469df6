// Step 6, in the route: the parsed body against its valibot schema.
import type { Context } from 'koa';
import * as v from 'valibot';
import { type AddManySchemas, safeParseAddMany } from '../../schemas/checked-batch.js';
import { requestError } from '../../schemas/request-error.js';

/** Validate the body against `schema`; throws VALIDATION_ERROR or BATCH_TOO_LARGE with every issue's path. */
export function parseBody<S extends v.GenericSchema>(ctx: Context, schema: S): v.InferOutput<S> {
  const result = v.safeParse(schema, ctx.request.body ?? {});
  if (result.success) return result.output;
  throw requestError(result.issues);
}

/** add-many's body: a batch the body reader checked has the rest validated (checked-batch.ts), any other body all of it. */
export function parseAddManyBody(ctx: Context, schemas: AddManySchemas) {
  const result = safeParseAddMany(schemas, ctx.request.body ?? {});
  if (result.success) return result.output;
  throw requestError(result.issues);
}
