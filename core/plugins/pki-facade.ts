/**
 * ctx.pki (SDK PkiToolkitFacade): the PKI toolkit handed to plugins. Keys, self-signed and CA-signed
 * certificates go through core/pki/issue (lean DER writer, KeyObjects built once per signer); CRLs through
 * core/pki/crl/build, OCSP responses through core/pki/ocsp/respond. Toolkit problems become PermanentError,
 * the SDK's "never succeeds as asked".
 */
import type { PkiToolkitFacade } from '@certwright/sdk';

export function pkiToolkitFacade(clock: () => number): PkiToolkitFacade {
  // TODO(issue 7, helper A): implement over core/pki.
  void clock;
  const missing = (): never => {
    throw new Error('ctx.pki is not implemented yet');
  };
  return { generateKey: missing, selfSigned: missing, signer: missing };
}
