import { ProblemError } from '../../errors/index.js';
import type { FieldDefinition, QueryLanguage } from '../../query/types.js';

/** A sort, projection or group element resolved against a language's field table. */
export interface ResolvedElement {
  field: FieldDefinition;
  /** The key of a parametric field (`label.env` → `env`). */
  key?: string;
}

/**
 * Resolves what clients put in `sortedBy[].element`, `fields[]` and `groupBy[]`: the camelCase result
 * property (`notAfter`, `contactEmail`, `labels`) or the lower-case query name (`valid.until`,
 * `label.env`), case-insensitively for query names.
 */
export function resolveElement(language: QueryLanguage, element: string): ResolvedElement | null {
  for (const field of language.fields) if (field.property === element) return { field };
  const lower = element.toLowerCase();
  for (const field of language.fields) {
    if (!field.parametric && field.name === lower) return { field };
    if (field.parametric && lower.startsWith(`${field.name}.`) && element.length > field.name.length + 1) {
      return { field, key: element.slice(field.name.length + 1) };
    }
  }
  return null;
}

export function invalid(message: string): ProblemError {
  return new ProblemError('HQL-002', { message });
}
