/** RFC 8555 §6.7 problem documents: `urn:ietf:params:acme:error:<type>` with the status each type takes. */
export const PROBLEM_STATUS = {
  accountDoesNotExist: 400,
  alreadyRevoked: 400,
  badCSR: 400,
  badNonce: 400,
  badPublicKey: 400,
  badRevocationReason: 400,
  badSignatureAlgorithm: 400,
  caa: 403,
  compound: 403,
  connection: 400,
  dns: 400,
  externalAccountRequired: 400,
  incorrectResponse: 403,
  invalidContact: 400,
  malformed: 400,
  orderNotReady: 403,
  rateLimited: 429,
  rejectedIdentifier: 400,
  serverInternal: 500,
  tls: 400,
  unauthorized: 403,
  unsupportedContact: 400,
  unsupportedIdentifier: 400,
  userActionRequired: 403,
  // RFC 9773 §4.2 (ARI): the certificate `replaces` names was already replaced.
  alreadyReplaced: 409,
  // draft-aaron-acme-profiles: the order's `profile` is not offered.
  invalidProfile: 400,
} as const;

export type ProblemType = keyof typeof PROBLEM_STATUS;

export interface ProblemDocument {
  type: string;
  detail: string;
  status: number;
  subproblems?: (Omit<ProblemDocument, 'status'> & { identifier?: { type: string; value: string } })[];
  algorithms?: string[];
}

/** An ACME error a route throws; the route wrapper answers it as application/problem+json. */
export class AcmeProblem extends Error {
  readonly status: number;
  constructor(
    readonly type: ProblemType,
    detail: string,
    readonly extra: { status?: number; headers?: Record<string, string>; algorithms?: string[]; subproblems?: ProblemDocument['subproblems'] } = {},
  ) {
    super(detail);
    this.name = 'AcmeProblem';
    this.status = extra.status ?? PROBLEM_STATUS[type];
  }

  document(): ProblemDocument {
    return {
      type: `urn:ietf:params:acme:error:${this.type}`,
      detail: this.message,
      status: this.status,
      ...(this.extra.subproblems ? { subproblems: this.extra.subproblems } : {}),
      ...(this.extra.algorithms ? { algorithms: this.extra.algorithms } : {}),
    };
  }
}

/** A stored error (order or challenge) in problem form. */
export const problemOf = (type: ProblemType, detail: string): ProblemDocument => new AcmeProblem(type, detail).document();
