import { ERROR_CATALOGUE, type ErrorCode } from './catalogue.js';

/** The body of every error answer (client-compat §6), sent as application/problem+json. */
export interface ProblemBody {
  error: string;
  message: string;
  title: string;
  status: number;
  detail?: string;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Throw from a handler to answer a catalogued problem. */
export class ProblemError extends Error {
  readonly status: number;
  constructor(readonly code: ErrorCode, options: { message?: string; detail?: string; headers?: Record<string, string> } = {}) {
    const entry = ERROR_CATALOGUE[code];
    super(options.message ?? entry.message);
    this.name = 'ProblemError';
    this.status = entry.status;
    this.detail = options.detail;
    this.headers = options.headers;
  }
  readonly detail: string | undefined;
  readonly headers: Record<string, string> | undefined;

  toBody(): ProblemBody {
    return problemBody(this.code, { message: this.message, detail: this.detail });
  }
}

export function problemBody(code: ErrorCode, options: { message?: string; detail?: string } = {}): ProblemBody {
  const entry = ERROR_CATALOGUE[code];
  const body: ProblemBody = { error: code, message: options.message ?? entry.message, title: entry.title, status: entry.status };
  if (options.detail !== undefined) body.detail = options.detail;
  return body;
}

/** JSON schema of a problem body, for route response declarations and the OpenAPI document. */
export const problemSchema = {
  $id: 'Problem',
  type: 'object',
  required: ['error', 'message', 'title', 'status'],
  properties: {
    error: { type: 'string' },
    message: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
  },
} as const;
