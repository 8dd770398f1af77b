import { ERROR_CATALOGUE, type CatalogueEntry, type ErrorCode } from './catalogue.js';

/** The body of every error answer (client-compat §6), sent as application/problem+json. */
export interface ProblemBody {
  error: string;
  message: string;
  title: string;
  status: number;
  detail?: string;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const STANDARD_MEMBERS = new Set(['error', 'message', 'title', 'status', 'detail']);

/** Throw from a handler to answer a catalogued problem. */
export class ProblemError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    options: { message?: string; detail?: string; headers?: Record<string, string>; extra?: Record<string, unknown> } = {},
    /** A code declared at run time (a plugin's configuration type); catalogued codes leave it out. */
    entry: CatalogueEntry = ERROR_CATALOGUE[code],
  ) {
    super(options.message ?? entry.message);
    this.name = 'ProblemError';
    this.status = entry.status;
    this.title = entry.title;
    this.detail = options.detail;
    this.headers = options.headers;
    this.extra = options.extra;
  }
  readonly detail: string | undefined;
  readonly title: string;
  readonly headers: Record<string, string> | undefined;
  /** Extension members of the body (RFC 9457 §3.2, e.g. a query error's `position`); never override the standard ones. */
  readonly extra: Record<string, unknown> | undefined;

  toBody(): ProblemBody {
    const body: ProblemBody = { error: this.code, message: this.message, title: this.title, status: this.status };
    if (this.detail !== undefined) body.detail = this.detail;
    if (this.extra) for (const [name, value] of Object.entries(this.extra)) if (!(name in body) && !STANDARD_MEMBERS.has(name)) Object.assign(body, { [name]: value });
    return body;
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
