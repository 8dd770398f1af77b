import type { CertificateInfo } from '../x509/model.js';
import type { ChainProblem } from './model.js';
import { nameConstraintViolations } from './name-constraints.js';
import type { ChainNode } from './nodes.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** Self-issued (RFC 5280 §6.1: subject = issuer): such CA certificates count neither in path lengths nor for name constraints. */
const selfIssued = (c: CertificateInfo) => c.dn.toLowerCase() === c.issuer.toLowerCase();

/**
 * RFC 5280 §6.1 checks over a path (leaf first) up to and including `last` (the anchor when the path is
 * trusted, else its top): validity at `at`, issuers being CAs allowed to sign certificates, path length
 * and name constraints. Signatures are not checked here: the builder only links certificates whose
 * issuer's key verifies them. Returns the problems of each position.
 */
export function checkPath(path: readonly ChainNode[], last: number, at: number): ChainProblem[][] {
  const problems: ChainProblem[][] = path.map(() => []);
  for (let i = 0; i <= last; i++) {
    const c = path[i]!.info;
    if (at > c.notAfter) problems[i]!.push({ code: 'expired', message: `"${c.dn}" expired on ${iso(c.notAfter)}` });
    else if (at < c.notBefore) problems[i]!.push({ code: 'not-yet-valid', message: `"${c.dn}" is not valid before ${iso(c.notBefore)}` });
  }
  for (let i = 1; i <= last; i++) {
    const ca = path[i]!.info;
    const below = path[i - 1]!.info;
    const bc = ca.extensions.basicConstraints;
    const v1Anchor = ca.version === 1 && ca.selfSigned && i === path.length - 1;
    if (!bc?.ca && !v1Anchor) {
      const why = bc ? 'basicConstraints CA:FALSE' : 'no basicConstraints';
      problems[i]!.push({ code: 'not-ca', message: `"${ca.dn}" is not a CA (${why}) but issued "${below.dn}"` });
    }
    const usage = ca.extensions.keyUsage;
    if (usage && !usage.usages.includes('keyCertSign')) {
      problems[i]!.push({ code: 'key-usage', message: `the key usage of "${ca.dn}" does not allow signing certificates (no keyCertSign)` });
    }
    if (bc?.pathLength !== undefined) {
      // Intermediate CAs between this one and the leaf, self-issued ones excepted.
      let intermediates = 0;
      for (let j = 1; j < i; j++) if (!selfIssued(path[j]!.info)) intermediates++;
      if (intermediates > bc.pathLength) {
        problems[i]!.push({
          code: 'path-length',
          message: `"${ca.dn}" allows ${bc.pathLength} intermediate CA(s) below it (pathlen:${bc.pathLength}) and ${intermediates} follow it`,
        });
      }
    }
    if (ca.extensions.nameConstraints) {
      for (let j = 0; j < i; j++) {
        if (j > 0 && selfIssued(path[j]!.info)) continue;
        for (const message of nameConstraintViolations(path[j]!.info, ca)) problems[j]!.push({ code: 'name-constraints', message });
      }
    }
  }
  return problems;
}
