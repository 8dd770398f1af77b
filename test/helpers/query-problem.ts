import type { Knex } from 'knex';
import { ProblemError } from '../../core/errors/index.js';
import { applyQuery, parseQuery, type QueryLanguage } from '../../core/query/index.js';

/**
 * The problem a query raises when parsed and compiled against `language`'s table (HQL-001 and its
 * position, expected tokens…); fails the test when the query is accepted or fails otherwise.
 */
export function queryProblem(knex: Knex, language: QueryLanguage, now: number): (query: string) => ProblemError {
  return (query) => {
    try {
      applyQuery(knex(language.table), parseQuery(query, language), language, { knex, now, table: language.table });
    } catch (err) {
      if (err instanceof ProblemError) return err;
      throw err;
    }
    throw new Error(`${query} did not fail`);
  };
}
