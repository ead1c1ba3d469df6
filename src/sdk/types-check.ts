// Compile-time only (tsc runs it in `npm run build`; nothing imports it): the
// body every response schema admits must fit the SDK's hand-written type for
// it, with the same fields, or the build fails. Leaf types may be wider in the
// SDK (a string where the schema has a picklist).
import type * as v from 'valibot';
import type { ErrorCode } from '../errors.js';
import type * as schemas from '../schemas/responses.js';
import type * as r from './response-types.js';
import type * as t from './types.js';

/** The object structure of T (every key, all levels), its leaf types left out. */
type Shape<T> = T extends readonly (infer E)[] ? Shape<E>[] : T extends object ? { [K in keyof T]-?: Shape<Exclude<T[K], null | undefined>> } : unknown;
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/**
 * True only when every A is a B (the SDK promises nothing the server does not
 * send) and both have the same keys at every level (the SDK shows every field).
 */
type Same<A, B> = [A] extends [B] ? Mutual<Shape<A>, Shape<B>> : false;
/** metrics is checked by the conformance test (its schema is built per route). */
type Body<S extends v.GenericSchema> = Omit<v.InferOutput<S>, 'metrics'>;
type Sdk<T> = Omit<T, 'metrics'>;

export type Checks = [
  Mutual<t.ServerErrorCode, ErrorCode>,
  Same<Body<typeof schemas.TokenResponseSchema>, Sdk<r.TokenResponse>>,
  Same<Body<typeof schemas.LimitsResponseSchema>, Sdk<r.LimitsResponse>>,
  Same<Body<typeof schemas.SessionResponseSchema>, Sdk<r.SessionResponse>>,
  Same<Body<typeof schemas.ResetResponseSchema>, Sdk<r.ResetResponse>>,
  Same<Body<typeof schemas.HasResponseSchema>, Sdk<r.HasResponse>>,
  Same<Body<typeof schemas.GetResponseSchema>, Sdk<r.GetResponse>>,
  Same<Body<typeof schemas.GetManyResponseSchema>, Sdk<r.GetManyResponse>>,
  Same<Body<typeof schemas.GetMetadataResponseSchema>, Sdk<r.MetadataResponse>>,
  Same<Body<typeof schemas.SetMetadataResponseSchema>, Sdk<r.SetMetadataResponse>>,
  Same<Body<typeof schemas.DeleteMetadataResponseSchema>, Sdk<r.SetMetadataResponse>>,
  Same<Body<typeof schemas.AddResponseSchema>, Sdk<r.AddResponse>>,
  Same<Body<typeof schemas.AddManyResponseSchema>, Sdk<r.AddManyResponse>>,
  Same<Body<typeof schemas.DeleteResponseSchema>, Sdk<r.DeleteResponse>>,
  Same<Body<typeof schemas.DeleteManyResponseSchema>, Sdk<r.DeleteManyResponse>>,
  Same<Body<typeof schemas.ClearResponseSchema>, Sdk<r.ClearResponse>>,
  Same<Body<typeof schemas.TouchResponseSchema>, Sdk<r.TouchResponse>>,
  Same<Body<typeof schemas.SearchResponseSchema>, Sdk<r.SearchAnswer>>,
  Same<Body<typeof schemas.SearchManyResponseSchema>, Sdk<r.SearchManyAnswer>>,
  Same<Body<typeof schemas.CountResponseSchema>, Sdk<r.CountResponse>>,
  Same<Body<typeof schemas.FacetResponseSchema>, Sdk<r.FacetResponse>>,
  Same<Body<typeof schemas.ListResponseSchema>, Sdk<r.ListResponse>>,
  Same<Body<typeof schemas.PatchMetadataResponseSchema>, Sdk<r.SetMetadataResponse>>,
  Same<Body<typeof schemas.ImportResponseSchema>, Sdk<r.ImportResponse>>,
];
/** A `false` anywhere above is a compile error here. */
type AllTrue<T extends readonly true[]> = T;
export type Verified = AllTrue<Checks>;
