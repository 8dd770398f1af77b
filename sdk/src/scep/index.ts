/**
 * @certwright/sdk/scep — an SCEP (RFC 8894) message codec.
 *
 * Server side:
 *   parsePkiMessage(der): PkiMessage                      signed request → type, transactionID, nonce,
 *                                                          signer certificate, digest, signatureValid, envelope
 *   openEnvelope(message, { raPrivateKey, raCertificateDer, allowedCiphers }): Uint8Array
 *                                                          the inner DER (CSR, IssuerAndSubject, IssuerAndSerial)
 *   challengePasswordOf(csrDer) / csrSubjectOf(csrDer) / readIssuerAndSubject(der) / readIssuerAndSerial(der)
 *   buildCertRep({ pkiStatus, failInfo?, transactionId, recipientNonce, … }): Uint8Array
 *   degenerateCertsOnly(certificatesDer): Uint8Array       GetCACert (shared with EST, cms/certs-only.ts)
 * Client side (tests, benchmarks):
 *   buildPkiMessage({ messageType, transactionId, inner, signerCertificatePem, … }): Uint8Array
 *   readCertRep(der, { privateKey, certificateDer?, digest? }): CertRep
 *   selfSignedForScep(privateKey, cn), csrForScep({ privateKey, cn, challengePassword }),
 *   encodeIssuerAndSubject / encodeIssuerAndSerial / issuerAndSerialOf
 * Errors: every bad input throws ScepError { failInfo: 'badAlg' | 'badMessageCheck' | 'badRequest' |
 * 'badTime' | 'badCertId' }, never another exception type.
 */
export { ScepError, FAIL_INFO_CODES, type FailInfo } from './errors.js';
export { CIPHERS, DIGEST_OIDS, type ContentCipher, type DigestName } from './algorithms.js';
export { MESSAGE_TYPE_CODES, PKI_STATUS_CODES, type ScepMessageType, type PkiStatus } from './attributes.js';
export { parsePkiMessage, type PkiMessage } from './pki-message.js';
export { openEnvelope, parseEnvelope, type OpenEnvelopeOptions, type ScepEnvelope, type EnvelopeRecipient } from './envelope.js';
export { unwrapContentKey } from './key-transport.js';
export {
  challengePasswordOf,
  csrSubjectOf,
  encodeIssuerAndSerial,
  encodeIssuerAndSubject,
  issuerAndSerialOf,
  readIssuerAndSerial,
  readIssuerAndSubject,
  type IssuerAndSerial,
  type IssuerAndSubject,
} from './inner-content.js';
export { buildCertRep, type CertRepOptions } from './cert-rep.js';
export { degenerateCertsOnly } from '../cms/certs-only.js';
export { degenerateSignedData, readDegenerateSignedData } from './degenerate.js';
export { buildPkiMessage, readCertRep, type PkiMessageOptions, type CertRep, type ReadCertRepOptions } from './client.js';
export { selfSignedForScep, csrForScep, transactionIdFor } from './client-identity.js';
