// Compile-time only (tsc runs it in `npm run build`; nothing imports it): the
// body every response schema admits must fit the SDK's hand-written type for
// it, with the same fields, or the build fails. Leaf types may be wider in the
// SDK (a string where the schema has a picklist).
import type * as v from 'valibot';
import type { ErrorCode } from '../errors.js';
import type * as r from '../schemas/responses.js';
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
  Same<Body<typeof r.TokenResponseSchema>, Sdk<t.TokenResponse>>,
  Same<Body<typeof r.LimitsResponseSchema>, Sdk<t.LimitsResponse>>,
  Same<Body<typeof r.SessionResponseSchema>, Sdk<t.SessionResponse>>,
  Same<Body<typeof r.ResetResponseSchema>, Sdk<t.ResetResponse>>,
  Same<Body<typeof r.HasResponseSchema>, Sdk<t.HasResponse>>,
  Same<Body<typeof r.GetResponseSchema>, Sdk<t.GetResponse>>,
  Same<Body<typeof r.GetManyResponseSchema>, Sdk<t.GetManyResponse>>,
  Same<Body<typeof r.GetMetadataResponseSchema>, Sdk<t.MetadataResponse>>,
  Same<Body<typeof r.SetMetadataResponseSchema>, Sdk<t.SetMetadataResponse>>,
  Same<Body<typeof r.DeleteMetadataResponseSchema>, Sdk<t.SetMetadataResponse>>,
  Same<Body<typeof r.AddResponseSchema>, Sdk<t.AddResponse>>,
  Same<Body<typeof r.AddManyResponseSchema>, Sdk<t.AddManyResponse>>,
  Same<Body<typeof r.DeleteResponseSchema>, Sdk<t.DeleteResponse>>,
  Same<Body<typeof r.DeleteManyResponseSchema>, Sdk<t.DeleteManyResponse>>,
  Same<Body<typeof r.ClearResponseSchema>, Sdk<t.ClearResponse>>,
  Same<Body<typeof r.TouchResponseSchema>, Sdk<t.TouchResponse>>,
  Same<Body<typeof r.SearchResponseSchema>, Sdk<t.SearchAnswer>>,
  Same<Body<typeof r.SearchManyResponseSchema>, Sdk<t.SearchManyAnswer>>,
  Same<Body<typeof r.CountResponseSchema>, Sdk<t.CountResponse>>,
  Same<Body<typeof r.FacetResponseSchema>, Sdk<t.FacetResponse>>,
  Same<Body<typeof r.ListResponseSchema>, Sdk<t.ListResponse>>,
  Same<Body<typeof r.PatchMetadataResponseSchema>, Sdk<t.SetMetadataResponse>>,
  Same<Body<typeof r.ImportResponseSchema>, Sdk<t.ImportResponse>>,
];
/** A `false` anywhere above is a compile error here. */
type AllTrue<T extends readonly true[]> = T;
export type Verified = AllTrue<Checks>;
