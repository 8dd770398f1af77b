/**
 * Builds a PKCS#10 request signed by its key (server-side key generation, benchmarks, tests): subject,
 * requested SANs, optional challenge password.
 */
import type { KeyObject } from 'node:crypto';
import { bitString, implicit, octets, oid, seq, setOf, smallInt, utf8String } from '../der/writer.js';
import { EXTENSIONS } from '../oids.js';
import { encodeGeneralNames } from '../issue/names.js';
import { subjectOf } from '../issue/issuer.js';
import { signerFor } from '../issue/signer.js';
import type { NameAttribute } from '../issue/names.js';
import type { SubjectAlternateName } from '../x509/model.js';
import { CSR_ATTRIBUTES } from './parse.js';

export interface CsrRequest {
  subject: string | NameAttribute[];
  sans?: SubjectAlternateName[];
  challengePassword?: string;
}

export function buildCsr(privateKey: KeyObject, request: CsrRequest): Uint8Array {
  const signer = signerFor(privateKey);
  const attributes: Uint8Array[] = [];
  if (request.challengePassword !== undefined) attributes.push(seq(oid(CSR_ATTRIBUTES.challengePassword), setOf(utf8String(request.challengePassword))));
  if (request.sans?.length) {
    const san = seq(oid(EXTENSIONS.subjectAltName), octets(encodeGeneralNames(request.sans)));
    attributes.push(seq(oid(CSR_ATTRIBUTES.extensionRequest), setOf(seq(san))));
  }
  const info = seq(smallInt(0), subjectOf({ subject: request.subject }), signer.spki, implicit(0, Buffer.concat(attributes.sort(Buffer.compare)), true));
  return seq(info, signer.algorithm, bitString(signer.sign(info)));
}
