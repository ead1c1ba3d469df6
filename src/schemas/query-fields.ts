// The request check of /search and /search-many: a query is a vector or a
// stored id (not both), a text, or a text with one of them (hybrid). Missing
// all three is reported at the vector field, a vector with an id at the id,
// `fusion` without both arms at `fusion`, and texts whose count differs from
// the vectors' (or ids') at the texts. Published in OpenAPI as anyOf the
// three `required`, the rest as x-checks (json-schema.ts reads the fields
// from QUERY_FIELDS).
import * as v from 'valibot';

export const QUERY_FIELDS = Symbol('queryFields');

/** `vector`, `id` and `text`: the request's names for the three kinds of query. */
export function queryFields<T extends Record<string, unknown>>(fields: [keyof T & string, keyof T & string, keyof T & string]) {
  const [vector, id, text] = fields;
  const check = v.rawCheck<T>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const input = dataset.value;
    const issue = (key: string, message: string) =>
      addIssue({
        message,
        path: [{ type: 'object', origin: 'value', input, key, value: input[key] }] as never,
      });
    const given = (key: string) => input[key] !== undefined;
    if (given(vector) && given(id)) return issue(id, `give ${vector} or ${id}, not both`);
    if (!given(vector) && !given(id) && !given(text)) return issue(vector, `${vector}, ${id} or ${text} is required`);
    const other = given(vector) ? vector : id;
    if (given('fusion') && !(given(text) && given(other))) return issue('fusion', `fusion needs both arms: ${text} with ${vector} or ${id}`);
    const texts = input[text],
      others = input[other];
    if (Array.isArray(texts) && Array.isArray(others) && texts.length !== others.length) {
      issue(text, `${text} must hold one text per entry of ${other} (${others.length}), not ${texts.length}`);
    }
  });
  return Object.assign(check, { [QUERY_FIELDS]: fields }) as typeof check;
}
