import { ProblemError, type ErrorCode } from '../errors/index.js';
import { DATASOURCE_ERRORS } from './error-codes.js';

export { DATASOURCE_ERRORS } from './error-codes.js';

export type DatasourceErrorCode = keyof typeof DATASOURCE_ERRORS;

/** A problem of this family, answered with its entry whether or not core/errors/catalogue.ts lists it yet. */
export function datasourceProblem(code: DatasourceErrorCode, message: string): ProblemError {
  return new ProblemError(code as unknown as ErrorCode, { message }, DATASOURCE_ERRORS[code]);
}

/**
 * Why a fetch failed, in words safe to answer and to log: messages are built here from what the datasource's
 * definition says (host, base DN, kind), never from a credential.
 */
export class FetchFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FetchFailure';
  }
}
