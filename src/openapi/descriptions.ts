// The longer text of each operation of the OpenAPI document (keyed by
// operationId; the one-line summary stays in operations.ts). Every operation
// needs one: the document test and the linters (spectral, redocly) say so.
export const OPERATION_DESCRIPTIONS: Record<string, string> = {
  overview:
    'Name, version, description, links (OpenAPI document, SDK, kernel, limits) and every route with its method. A browser (Accept: text/html) gets the demo page instead, which runs the whole flow with /sdk.js.',
  openapi:
    'This OpenAPI 3.1 document, generated from the schemas the server validates requests with, so its bounds are the limits in force on this server. Revalidate with If-None-Match.',
  limits:
    "Every limit in force (dimensions, capacity, batch sizes, id and metadata sizes, rate limits, memory budget, allowed CORS origins) and the server's current usage. Needs no token.",
  sdk: "The JavaScript client as one ES module: TempvecClient (one method per operation) and LocalIndex, which runs the same WebAssembly kernel in the page. Import it from any origin: `await import('<service>/sdk.js')`.",
  sdkTypes: 'TypeScript declarations of /sdk.js, for editors and tsc.',
  kernel:
    'The WebAssembly search kernel the server runs: the SIMD128 build, or with KERNEL_BUILD=relaxed the relaxed-SIMD one (/limits `backend` says which). LocalIndex.load() streams it from beside /sdk.js; served as application/wasm so WebAssembly.instantiateStreaming can compile it while it downloads.',
  kernelSimd128:
    'The SIMD128 build of the kernel, which every engine with WebAssembly SIMD runs: LocalIndex.load() falls back to it where the engine cannot compile /kernel.wasm for want of relaxed SIMD (Safari).',
  demoPassages:
    "The demo page's text sample: README.md and docs/*.md split at build time (scripts/demo-passages.ts) into a few hundred passages of prose, markdown stripped and code dropped, each `{id, text, metadata: {source, section}}`, ready for add-many by text. An empty array when the tree is not built.",
  modelManifest:
    'The files LocalIndex.embed() loads on first use to embed texts in the page with the same model and kernel as the server: each at a URL holding its content hash (relative to this document), served with `Cache-Control: immutable`, so a page fetches them once. This document itself is revalidated by ETag.',
  modelFile:
    'One file of the embedding model, read from the model package in node_modules or the kernel build: `Cache-Control: public, max-age=31536000, immutable`, since its URL changes with its content. 404 NOT_FOUND for a hash that is not the current one.',
  createToken:
    'Creates an anonymous bearer token with its own private, empty index that lives until it is idle for sessionTtlMs. Send the token as `Authorization: Bearer <token>`. Takes no body: a request with one is answered 400 VALIDATION_ERROR. Limited per client address (429 RATE_LIMITED with Retry-After), by the live sessions of the address (MAX_SESSIONS_PER_ADDRESS, IPv6 by /64: 429 TOO_MANY_SESSIONS) and by the number of live sessions (503).',
  health: 'Liveness: answers 200 as long as the process can answer at all.',
  ready:
    'Readiness: 200 once the kernel is compiled and the sessions on disk are restored, 503 INSTANCE_UNAVAILABLE before that and while shutting down, so a load balancer sends no traffic to this instance.',
  metrics:
    'Prometheus text exposition of the service: requests by route and status, latencies, sessions, vectors, memory, rate-limited and refused requests, kernel time, event-loop delay (p99 and max since the previous scrape).',
  getSession:
    "The caller's session (ids, timestamps, time to live, configuration), its index statistics (vectors, dimensions, metric, memory) and usage against its capacity. Like every authenticated request it moves the expiry forward.",
  resetIndex:
    'Deletes every vector and unsets dimensions, metric and vector type, so the next add can set new ones; the token and session stay. Takes no body: a request with one is answered 400 VALIDATION_ERROR.',
  has: 'Whether a vector with this id is stored (200 either way).',
  get: 'One stored vector: its components as stored (float32) and its metadata. 404 VECTOR_NOT_FOUND when the id is not stored.',
  getMany: 'Several stored vectors in request order, each id once; ids that are not stored are listed in notFound rather than failing the request.',
  getMetadata: 'The metadata object of one vector ({} when it has none). 404 VECTOR_NOT_FOUND when the id is not stored.',
  setMetadata:
    'Replaces the whole metadata object of one vector (the vector itself is unchanged). Metadata is any JSON object within the published size, depth and key limits.',
  deleteMetadata: 'Sets the metadata of one vector to {} (the vector stays).',
  add: 'Adds one vector, or replaces the vector and metadata stored under its id. The first add of a session fixes its dimensions, metric (cosine by default) and vector type (float32 by default); later adds must agree. Vectors are JSON numbers or base64 of little-endian float32.',
  addMany:
    'Adds or replaces up to the published batch size of vectors in one request, all or nothing: any invalid record, or a batch that would pass the capacity, stores none of them. When an id repeats, the last record wins.',
  delete: 'Deletes one vector. An id that is not stored is reported in notFound, not as an error.',
  deleteMany: 'Deletes several vectors; ids not stored are reported in notFound. A repeated id counts once.',
  touch:
    'Renews records (per-record TTL): each live id with a ttlMs now expires ttlMs from now (logged, so a restart keeps it); a live one without a ttl is counted and left as it is. Ids not stored, deleted or expired are reported in notFound: an expired record cannot be renewed. A repeated id counts once. Up to batch.getMany ids.',
  count: 'How many stored vectors match a metadata filter, in the filter language of /search; every vector without one.',
  facet:
    'Counts each value at a metadata path among the vectors a filter matches (all without one), exactly, from the filter index: an array counts each distinct element once per vector. The first limit values come by count, descending, then by value (numbers ascending, strings by Unicode code point, false, true, null); distinctValues says how many there are. Numeric ranges count the vectors holding a number in [gte, lt). Strings longer than maxIndexedValueBytes are not values: longStrings counts the vectors holding one; objects are not values (facet a nested path).',
  list: 'Pages through the stored ids in insertion order, or with orderBy by a metadata value (numbers, then strings by code point; ties in insertion order; vectors without such a value last), optionally with vectors and metadata, optionally filtered. Pass nextCursor back (with the same orderBy) to continue; a vector stored and unchanged through the whole listing appears exactly once, whatever is written between pages. 400 INVALID_CURSOR for a cursor this session did not issue, or issued for another order.',
  patchMetadata:
    'Changes the metadata of one vector with an RFC 7396 JSON Merge Patch: keys set to null are removed, objects are merged, anything else replaces. 404 VECTOR_NOT_FOUND when the id is not stored.',
  exportVectors:
    'Streams the whole session as NDJSON: a header line (format, version, dimensions, metric, vectorType, count), then one {id, vector, metadata} line per vector in insertion order (with its text, and its ttlMs and expiresAt, when it has them), a consistent snapshot of the moment the export starts: records expired by then are left out. POST /vectors/import (here or on another server) reads it back.',
  importVectors:
    'Reads an export (NDJSON as GET /vectors/export writes it, up to maxImportBytes), validates it whole and applies it all or nothing with the rules of add-many.',
  clear:
    'Deletes every vector; dimensions, metric and vector type stay, so the next add must still agree with them. Takes no body: a request with one is answered 400 VALIDATION_ERROR.',
  search:
    'Exact nearest-neighbour search: the topK stored vectors nearest to queryVector (cosine similarity, higher first, or Euclidean distance, lower first), ties in insertion order. An optional metadata filter is applied before ranking ($eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $exists, $and, $or, $not, dotted paths).',
  searchMany:
    'One search per query vector in one request, each list exactly what /search answers for that query; topK, filter and the other options apply to every query.',
  embed:
    "Embeds texts with the server's builtin model, use-lite-512 (Universal Sentence Encoder lite: English, 512 dimensions, unit-length vectors), on its embedding threads, off the event loop. The model reads the first 128 tokens of a text; the rest is truncated. A text's vector does not depend on the other texts of the call. Texts of one token in flight are bounded (EMBEDDING_TEXTS_IN_FLIGHT_PER_TOKEN), and all tokens' together: past either the call is refused at once with 503 EMBEDDING_BUSY and Retry-After.",
};
