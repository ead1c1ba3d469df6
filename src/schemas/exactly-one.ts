// A request check: exactly one of two alternative fields (e.g. queryVector
// or queryId). Neither is reported at the first field (it is missing), both
// at the second. Published in OpenAPI as oneOf two `required` (json-schema.ts
// reads the fields from EXACTLY_ONE).
import * as v from 'valibot';

export const EXACTLY_ONE = Symbol('exactlyOne');

export function exactlyOne<T extends Record<string, unknown>>(fields: [keyof T & string, keyof T & string]) {
  const [a, b] = fields;
  const check = v.rawCheck<T>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const input = dataset.value;
    const given = fields.filter((field) => input[field] !== undefined);
    if (given.length === 1) return;
    const key = given.length === 0 ? a : b;
    addIssue({
      message: given.length === 0 ? `${a} or ${b} is required` : `give ${a} or ${b}, not both`,
      path: [{ type: 'object', origin: 'value', input, key, value: input[key] }] as never,
    });
  });
  return Object.assign(check, { [EXACTLY_ONE]: fields }) as typeof check;
}
