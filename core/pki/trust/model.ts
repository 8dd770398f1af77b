import type { CertificateInfo } from '../x509/model.js';

/** Why a link of a path fails. Codes are stable (clients and other modules switch on them). */
export type ChainProblemCode =
  | 'expired'
  | 'not-yet-valid'
  | 'not-ca'
  | 'key-usage'
  | 'path-length'
  | 'name-constraints'
  | 'signature'
  | 'loop'
  | 'incomplete'
  | 'untrusted'
  | 'revoked'
  | 'too-long';

export interface ChainProblem {
  code: ChainProblemCode;
  message: string;
}

/** One certificate of a path and what is wrong with it. */
export interface ChainLink {
  certificate: CertificateInfo;
  /** The imported CA this certificate is, if any. */
  ca: string | null;
  problems: ChainProblem[];
}

/**
 * A built path, leaf first. `complete`: it ends at a self-signed certificate. `trusted`: a CA of the path is
 * flagged trusted (the first one is the anchor). `valid`: trusted and no link has a problem.
 */
export interface ChainResult {
  path: ChainLink[];
  complete: boolean;
  trusted: boolean;
  anchor: string | null;
  valid: boolean;
}
