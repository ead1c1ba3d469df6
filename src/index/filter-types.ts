// The types of metadata filters, shared by the parser (filter.ts) and the
// matcher (filter-match.ts) so that neither imports the other.

export type Metadata = Record<string, unknown>;
export type Filter = Record<string, unknown>;
export type RangeOp = '$gt' | '$gte' | '$lt' | '$lte';

export type FilterNode =
  | { kind: 'and'; nodes: FilterNode[] }
  | { kind: 'or'; nodes: FilterNode[] }
  | { kind: 'not'; node: FilterNode }
  /** Equality with a JSON value (scalar, object or array). */
  | { kind: 'eq'; path: string; value: unknown }
  | { kind: 'range'; path: string; op: RangeOp; value: number | string }
  | { kind: 'exists'; path: string; value: boolean };
