/**
 * The query engine of HCQL / HRQL / HEQL / HDQL (client-compat §4): one grammar (grammar.peggy), one
 * checker (parse.ts) and one SQL compiler (compile.ts) over per-language field tables (types.ts).
 *
 *   const ast = parseQuery(body.query, LANGUAGE);              // HQL-001 with position on bad input
 *   applyQuery(knex(T), ast, LANGUAGE, { knex, now, table: T }); // bound parameters only
 */
export { parseQuery } from './parse.js';
export { applyQuery, sideEqualityOf, sideMatchesOf, type SideEquality } from './compile.js';
export { denseSideWalk, DENSE_SIDE_MATCHES, querySource, type QuerySource } from './source.js';
export { queryDictionary, type DictionaryEntry, type DictionaryField, type DictionarySpecial } from './dictionary.js';
export { fieldByName, fieldByProperty, resolveField, operatorsOf, DEFAULT_OPERATORS, type FieldRef } from './fields.js';
export { parseIsoDate } from './dates.js';
export { MAX_DEPTH, MAX_PARAMETERS, MAX_QUERY_LENGTH, MAX_REGEX_LENGTH } from './limits.js';
export { QUERY_ERRORS } from './errors.js';
export type {
  CompileContext,
  FieldDefinition,
  FieldStorage,
  FieldType,
  Literal,
  Operator,
  QueryLanguage,
  QueryNode,
  SpecialDefinition,
} from './types.js';
