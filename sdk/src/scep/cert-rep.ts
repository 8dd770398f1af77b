/**
 * buildCertRep(options) → DER: the server's answer to any SCEP request (RFC 8894 §3.3.2).
 *
 * A SignedData signed by the RA/CA key, carrying the signer certificate, with the signed attributes
 * contentType, messageDigest, signingTime (unless signingTime: null), transactionID, messageType 3,
 * pkiStatus, failInfo (+ failInfoText) on FAILURE, senderNonce (fresh 16 bytes unless given) and
 * recipientNonce (the request's senderNonce). SUCCESS encapsulates an envelope to the requester's
 * certificate holding a degenerate SignedData with the certificates (issued one first) or the CRL;
 * FAILURE and PENDING have no content (eContentType id-data, eContent absent).
 * Cost: one RSA signature, plus one RSA public encryption on SUCCESS.
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import { OID, type ContentCipher, type DigestName } from './algorithms.js';
import { MESSAGE_TYPE_CODES, PKI_STATUS_CODES, type PkiStatus } from './attributes.js';
import { certificateFields, pemToDer } from './certificate-fields.js';
import { degenerateSignedData } from './degenerate.js';
import { octetString, printableString, utf8String } from './der-writer.js';
import { sealEnvelope, sealRecipient } from './envelope.js';
import { FAIL_INFO_CODES, type FailInfo } from './errors.js';
import { attribute, buildSignedData } from './signed-data.js';

export interface CertRepOptions {
  readonly pkiStatus: PkiStatus;
  /** Required with FAILURE. */
  readonly failInfo?: FailInfo;
  /** Optional human-readable reason (RFC 8894 failInfoText), FAILURE only. */
  readonly failInfoText?: string;
  readonly transactionId: string;
  /** The request's senderNonce. */
  readonly recipientNonce: Uint8Array;
  /** Default: 16 fresh random bytes. */
  readonly senderNonce?: Uint8Array;
  readonly digest: DigestName;
  /** The RA/CA certificate that signs (further certificates in the PEM are carried too). */
  readonly signerCertificatePem: string;
  readonly signerPrivateKey: KeyObject;
  /** The requester's certificate (its signer certificate): the envelope recipient on SUCCESS. */
  readonly recipientCertificateDer?: Uint8Array;
  /** Content encryption of the SUCCESS envelope, normally the request's. */
  readonly cipher: ContentCipher;
  /** SUCCESS: the issued certificate first, then its chain if wanted. */
  readonly certificatesDer?: readonly Uint8Array[];
  /** SUCCESS to a GetCRL: the CRL. */
  readonly crlDer?: Uint8Array;
  /** Default: now; null to omit signingTime. */
  readonly signingTime?: Date | null;
}

export function buildCertRep(o: CertRepOptions): Uint8Array {
  const [signerDer, ...chain] = pemToDer(o.signerCertificatePem);
  if (!signerDer) throw new TypeError('signerCertificatePem holds no certificate');
  const attributes = [
    attribute(OID.transactionID, printableString(o.transactionId)),
    attribute(OID.messageType, printableString(String(MESSAGE_TYPE_CODES.CertRep))),
    attribute(OID.pkiStatus, printableString(String(PKI_STATUS_CODES[o.pkiStatus]))),
    attribute(OID.senderNonce, octetString(o.senderNonce ?? randomBytes(16))),
    attribute(OID.recipientNonce, octetString(o.recipientNonce)),
  ];
  let eContent: Uint8Array | undefined;
  if (o.pkiStatus === 'FAILURE') {
    if (!o.failInfo) throw new TypeError('A FAILURE CertRep needs a failInfo');
    attributes.push(attribute(OID.failInfo, printableString(String(FAIL_INFO_CODES[o.failInfo]))));
    if (o.failInfoText) attributes.push(attribute(OID.failInfoText, utf8String(o.failInfoText)));
  } else if (o.pkiStatus === 'SUCCESS') {
    if (!o.recipientCertificateDer) throw new TypeError('A SUCCESS CertRep needs recipientCertificateDer');
    const certificates = o.certificatesDer ?? [];
    if (certificates.length === 0 && !o.crlDer) throw new TypeError('A SUCCESS CertRep needs certificatesDer or crlDer');
    const inner = degenerateSignedData(certificates, o.crlDer ? [o.crlDer] : []);
    eContent = sealEnvelope(inner, [sealRecipient(o.recipientCertificateDer)], o.cipher);
  }
  return buildSignedData({
    ...(eContent ? { eContent } : {}),
    attributes,
    digest: o.digest,
    signer: certificateFields(signerDer),
    signerPrivateKey: o.signerPrivateKey,
    ...(o.signingTime !== undefined ? { signingTime: o.signingTime } : {}),
    extraCertificatesDer: chain,
  });
}
