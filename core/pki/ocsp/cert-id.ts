import type * as pkijs from 'pkijs';
import { hex } from '../der/reader.js';
import { hashName, integerHex } from './asn1.js';

/** A CertID (RFC 6960 §4.1.1): which certificate of which issuer a request or response is about. */
export interface OcspCertId {
  /** sha1, sha256, … as openssl ocsp -text prints it. */
  hashAlgorithm: string;
  /** Lower-case hex. */
  issuerNameHash: string;
  issuerKeyHash: string;
  /** Lower-case hex of the serial number, as the X.509 decoder gives it. */
  serial: string;
}

export function certId(id: pkijs.CertID): OcspCertId {
  return {
    hashAlgorithm: hashName(id.hashAlgorithm.algorithmId),
    issuerNameHash: hex(id.issuerNameHash.valueBlock.valueHexView),
    issuerKeyHash: hex(id.issuerKeyHash.valueBlock.valueHexView),
    serial: integerHex(id.serialNumber),
  };
}

/** id-pkix-ocsp-nonce (RFC 6960 §4.4.1). */
export const OCSP_NONCE = '1.3.6.1.5.5.7.48.1.2';
