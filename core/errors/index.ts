export { ERROR_CATALOGUE } from './catalogue.js';
export type { ErrorCode, CatalogueEntry } from './catalogue.js';
export { ProblemError, problemBody, problemSchema, PROBLEM_CONTENT_TYPE } from './problem.js';
export type { ProblemBody } from './problem.js';
