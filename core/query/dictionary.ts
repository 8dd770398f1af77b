import { operatorsOf } from './fields.js';
import type { FieldType, Operator, QueryLanguage } from './types.js';

/**
 * GET …/search/dictionary: what a client (or a person writing a query) can use, generated from the
 * language table so it never drifts from the compiler. One flat array, each entry tagged by `kind`:
 *
 *   { kind: 'field', name: 'valid.until', type: 'date', operators: [...], description, property?,
 *     sortable?, groupable?, values?, parametric? }           — `label` + parametric: write `label.<key>`
 *   { kind: 'special', name: 'status is', subject: 'status', verb: 'is', negation: 'not',
 *     values: ['valid', 'expired', 'revoked'], description } — `status is [not] valid`
 */
export interface DictionaryField {
  kind: 'field';
  name: string;
  type: FieldType;
  operators: Operator[];
  description: string;
  /** camelCase result property (sortedBy, fields, groupBy). */
  property?: string;
  sortable?: boolean;
  groupable?: boolean;
  values?: string[];
  /** Written `<name>.<key>` (`label.env`). */
  parametric?: boolean;
}

export interface DictionarySpecial {
  kind: 'special';
  /** `status is`, `trigger.results has`. */
  name: string;
  subject: string;
  verb: 'is' | 'has';
  /** The word that negates it: `status is not valid`, `trigger.results has no failure`. */
  negation: 'not' | 'no';
  values: string[];
  description: string;
}

export type DictionaryEntry = DictionaryField | DictionarySpecial;

export function queryDictionary(language: QueryLanguage): DictionaryEntry[] {
  const fields = language.fields.map(
    (f): DictionaryField => ({
      kind: 'field',
      name: f.name,
      type: f.type,
      operators: [...operatorsOf(f)],
      description: f.description,
      ...(f.property !== undefined ? { property: f.property } : {}),
      ...(f.sortable ? { sortable: true } : {}),
      ...(f.groupable ? { groupable: true } : {}),
      ...(f.values ? { values: [...f.values] } : {}),
      ...(f.parametric ? { parametric: true } : {}),
    }),
  );
  const specials = language.specials.map(
    (s): DictionarySpecial => ({
      kind: 'special',
      name: `${s.subject} ${s.verb}`,
      subject: s.subject,
      verb: s.verb,
      negation: s.verb === 'has' ? 'no' : 'not',
      values: Object.keys(s.values),
      description: s.description,
    }),
  );
  return [...fields, ...specials];
}
