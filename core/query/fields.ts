import type { FieldDefinition, FieldType, Operator, QueryLanguage } from './types.js';

/** Operators a field takes unless its definition lists its own (`FieldDefinition.operators`). */
export const DEFAULT_OPERATORS: Record<FieldType, readonly Operator[]> = {
  string: ['equals', 'not equals', 'matches', 'contains', 'in', 'not in', 'within', 'exists', 'not exists'],
  date: ['equals', 'not equals', 'before', 'after', 'in', 'not in', 'exists', 'not exists'],
  number: ['equals', 'not equals', 'before', 'after', 'in', 'not in', 'exists', 'not exists'],
  boolean: ['equals', 'not equals', 'exists'],
};

export const operatorsOf = (field: FieldDefinition): readonly Operator[] => field.operators ?? DEFAULT_OPERATORS[field.type];

/** A field of a language, with the key of a parametric one (`label.env` → label, `env`). */
export interface FieldRef {
  field: FieldDefinition;
  key?: string;
}

/**
 * `name` as a query writes it: case-insensitive dotted name; for a parametric field the prefix is
 * case-insensitive and the key after it is kept as written (`Label.Env` → label, `Env`).
 */
export function resolveField(language: QueryLanguage, name: string): FieldRef | undefined {
  const lower = name.toLowerCase();
  for (const field of language.fields) if (!field.parametric && field.name === lower) return { field };
  for (const field of language.fields) {
    if (field.parametric && lower.startsWith(`${field.name}.`) && name.length > field.name.length + 1) {
      return { field, key: name.slice(field.name.length + 1) };
    }
  }
  return undefined;
}

/** The field a lower-case query name (`valid.until`, `label.env`) designates; case-insensitive. */
export function fieldByName(language: QueryLanguage, name: string): FieldDefinition | undefined {
  return resolveField(language, name)?.field;
}

/**
 * The field of a camelCase result property (`notAfter`, `contactEmail`, `_id`): what `sortedBy`,
 * `fields` and `groupBy` carry. Falls back to the query name, which clients send there too.
 */
export function fieldByProperty(language: QueryLanguage, property: string): FieldDefinition | undefined {
  return language.fields.find((f) => f.property === property) ?? fieldByName(language, property);
}

/** Query names as written (`label.<key>` for parametric ones). */
export const queryNameOf = (field: FieldDefinition): string => (field.parametric ? `${field.name}.<key>` : field.name);

/** Up to five field names close to a misspelt one, for the error's `expected`. */
export function closeFieldNames(language: QueryLanguage, name: string): string[] {
  const wanted = name.toLowerCase();
  return language.fields
    .map((f) => ({ name: queryNameOf(f), distance: f.name.startsWith(wanted) || wanted.startsWith(f.name) ? 0 : editDistance(wanted, f.name) }))
    .filter((c) => c.distance <= Math.max(2, Math.floor(wanted.length / 3)))
    .sort((a, b) => a.distance - b.distance || a.name.localeCompare(b.name))
    .slice(0, 5)
    .map((c) => c.name);
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return 99;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
