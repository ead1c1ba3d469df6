// A request check: exactly one of two alternative fields (e.g. queryVector
// or queryId), reported at the object (both) or as missing (neither).
import * as v from 'valibot';

export function exactlyOne<T extends Record<string, unknown>>(fields: [keyof T & string, keyof T & string]) {
  const [a, b] = fields;
  return v.rawCheck<T>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const given = fields.filter((field) => dataset.value[field] !== undefined);
    if (given.length !== 1) addIssue({ message: given.length ? `give ${a} or ${b}, not both` : `${a} or ${b} is required` });
  });
}
