/**
 * parsePkiMessage(der) → PkiMessage: the server's view of an incoming SCEP request (RFC 8894 §3.2).
 *
 * It reads the SignedData, finds the signer's certificate among the carried ones, verifies the signature
 * (one RSA public operation) and parses, without opening, the envelope. Decrypting is `openEnvelope`'s
 * job, so a server can refuse a message (bad signature, refused digest) before its private key is used.
 * A malformed or non-request message throws ScepError (badRequest; badAlg for an unknown digest or
 * signature algorithm; badCertId when the signer's certificate is missing); a signature that does not
 * verify is reported in `signatureValid`, not thrown, so the server can still answer a signed FAILURE.
 */
import type { ContentCipher, DigestName } from './algorithms.js';
import { OID } from './algorithms.js';
import { MESSAGE_TYPE_CODES, numberAttribute, octetAttribute, requestTypeOf, stringAttribute, type ScepMessageType } from './attributes.js';
import { readTime } from './der.js';
import { parseEnvelope, type ScepEnvelope } from './envelope.js';
import { guarded, ScepError } from './errors.js';
import { parseSignedData, verifySigner } from './signed-data.js';

export interface PkiMessage {
  readonly messageType: ScepMessageType;
  /** The numeric messageType (19, 17, 20, 21, 22). */
  readonly messageTypeCode: number;
  readonly transactionId: string;
  readonly senderNonce: Uint8Array;
  /** The signer's certificate (the client's self-signed one, or the certificate being renewed). */
  readonly signerCertificateDer: Uint8Array;
  readonly digestAlgorithm: DigestName;
  /** messageDigest, contentType and the signature over the signed attributes all check out. */
  readonly signatureValid: boolean;
  readonly signingTime?: Date;
  /** The pkcsPKIEnvelope, parsed but not decrypted (its byte fields are views into the input buffer). */
  readonly envelope: ScepEnvelope;
  /** Shortcut for envelope.contentEncryption (null: an algorithm this codec does not know). */
  readonly contentEncryption: ContentCipher | null;
}

export function parsePkiMessage(der: Uint8Array): PkiMessage {
  return guarded('badRequest', 'Malformed pkiMessage', () => {
    const sd = parseSignedData(der);
    const code = numberAttribute(sd.attributes, OID.messageType);
    if (code === undefined) throw new ScepError('badRequest', 'The message has no messageType');
    const messageType = requestTypeOf(code);
    if (!messageType) {
      throw new ScepError('badRequest', code === MESSAGE_TYPE_CODES.CertRep ? 'A CertRep is not a request' : `Unknown messageType ${code}`);
    }
    const transactionId = stringAttribute(sd.attributes, OID.transactionID);
    if (!transactionId) throw new ScepError('badRequest', 'The message has no transactionID');
    const senderNonce = octetAttribute(sd.attributes, OID.senderNonce);
    if (!senderNonce || senderNonce.length === 0) throw new ScepError('badRequest', 'The message has no senderNonce');
    const [time] = sd.attributes.get(OID.signingTime) ?? [];
    const signingTime = time ? readTime(time, 'signingTime') : undefined;
    if (!sd.eContent) throw new ScepError('badRequest', 'The message carries no pkcsPKIEnvelope');
    const envelope = parseEnvelope(sd.eContent);
    const { certificate, valid } = verifySigner(sd);
    return {
      messageType,
      messageTypeCode: code,
      transactionId,
      // Copies, so the message does not pin or alias the request buffer.
      senderNonce: Uint8Array.from(senderNonce),
      signerCertificateDer: Uint8Array.from(certificate.der),
      digestAlgorithm: sd.digestAlgorithm,
      signatureValid: valid,
      ...(signingTime ? { signingTime } : {}),
      envelope,
      contentEncryption: envelope.contentEncryption,
    };
  });
}
