import type { CaRecord } from './store.js';

/** What the API answers for a CA. */
export interface CaView {
  _id: string;
  name: string;
  certificate: string;
  trusted: boolean;
  trustedForServerAuthentication: boolean;
  trustedForClientAuthentication: boolean;
  crlUrl: string | null;
  responderUrl: string | null;
  outdatedRevocationStatusPolicy: string;
  public: boolean;
  downloadable: boolean;
  refresh: string | null;
  timeout: string | null;
  dn: string;
  issuer: string;
  serial: string;
  subjectKeyIdentifier: string | null;
  authorityKeyIdentifier: string | null;
  notBefore: number;
  notAfter: number;
  selfSigned: boolean;
  thumbprint: string;
  publicKeyThumbprint: string;
}

export function view(ca: CaRecord): CaView {
  return {
    _id: ca.id,
    name: ca.name,
    certificate: ca.certificate,
    trusted: ca.trusted,
    trustedForServerAuthentication: ca.trusted,
    trustedForClientAuthentication: ca.trustedForClientAuth,
    crlUrl: ca.crlUrl,
    responderUrl: ca.ocspUrl,
    outdatedRevocationStatusPolicy: ca.outdatedRevocationStatusPolicy,
    public: ca.public,
    downloadable: ca.downloadable,
    refresh: ca.refresh,
    timeout: ca.timeout,
    dn: ca.subjectDn,
    issuer: ca.issuerDn,
    serial: ca.serial,
    subjectKeyIdentifier: ca.ski,
    authorityKeyIdentifier: ca.aki,
    notBefore: ca.notBefore,
    notAfter: ca.notAfter,
    selfSigned: ca.selfSigned,
    thumbprint: ca.thumbprintSha1,
    publicKeyThumbprint: ca.publicKeyThumbprint,
  };
}
