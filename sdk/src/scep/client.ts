/**
 * The client side of SCEP, for tests and benchmarks (and any plugin that must talk to an upstream SCEP
 * server): build a signed, enveloped request, and read the CertRep that answers it.
 *
 *   buildPkiMessage({ messageType, transactionId, senderNonce?, inner, signerCertificatePem,
 *                     signerPrivateKey, recipientCertificatesDer, cipher, digest }) → DER
 *   readCertRep(der, { privateKey, certificateDer?, digest? }) → CertRep
 */
import type { KeyObject } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { CIPHERS, OID, type ContentCipher, type DigestName } from './algorithms.js';
import { failInfoOf, MESSAGE_TYPE_CODES, numberAttribute, octetAttribute, pkiStatusOf, stringAttribute, type PkiStatus, type ScepMessageType } from './attributes.js';
import { certificateFields, pemToDer, sameBytes } from './certificate-fields.js';
import { readDegenerateSignedData } from './degenerate.js';
import { octetString, printableString } from './der-writer.js';
import { decryptEnvelope, parseEnvelope, sealEnvelope, sealRecipient, type EnvelopeRecipient } from './envelope.js';
import { guarded, ScepError, type FailInfo } from './errors.js';
import { attribute, buildSignedData, parseSignedData, verifySigner } from './signed-data.js';

export interface PkiMessageOptions {
  /** A request type, or any number (tests of unknown types). */
  readonly messageType: ScepMessageType | number;
  readonly transactionId: string;
  /** Default: 16 fresh random bytes (pass one to check the CertRep's recipientNonce). */
  readonly senderNonce?: Uint8Array;
  /** The DER to envelope: CSR, IssuerAndSubject or IssuerAndSerialNumber. */
  readonly inner: Uint8Array;
  /** The client's certificate (self-signed, see selfSignedForScep, or the one being renewed). */
  readonly signerCertificatePem: string;
  readonly signerPrivateKey: KeyObject;
  /** The RA/CA certificates to encrypt to (RSA). */
  readonly recipientCertificatesDer: readonly Uint8Array[];
  readonly cipher: ContentCipher;
  readonly digest: DigestName;
  /** Default: now; null to omit. */
  readonly signingTime?: Date | null;
}

export function buildPkiMessage(o: PkiMessageOptions): Uint8Array {
  const [signerDer] = pemToDer(o.signerCertificatePem);
  if (!signerDer) throw new TypeError('signerCertificatePem holds no certificate');
  const code = typeof o.messageType === 'number' ? o.messageType : MESSAGE_TYPE_CODES[o.messageType];
  const envelope = sealEnvelope(o.inner, o.recipientCertificatesDer.map(sealRecipient), o.cipher);
  return buildSignedData({
    eContent: envelope,
    attributes: [
      attribute(OID.transactionID, printableString(o.transactionId)),
      attribute(OID.messageType, printableString(String(code))),
      attribute(OID.senderNonce, octetString(o.senderNonce ?? randomBytes(16))),
    ],
    digest: o.digest,
    signer: certificateFields(signerDer),
    signerPrivateKey: o.signerPrivateKey,
    ...(o.signingTime !== undefined ? { signingTime: o.signingTime } : {}),
  });
}

export interface CertRep {
  readonly pkiStatus: PkiStatus;
  readonly failInfo?: FailInfo;
  readonly failInfoText?: string;
  readonly transactionId: string;
  readonly recipientNonce: Uint8Array;
  readonly senderNonce: Uint8Array;
  readonly signatureValid: boolean;
  readonly signerCertificateDer: Uint8Array;
  readonly digestAlgorithm: DigestName;
  /** The envelope's content encryption (SUCCESS only). */
  readonly contentEncryption?: ContentCipher;
  /** SUCCESS: the certificates of the degenerate SignedData, in order (the issued one first). */
  readonly certificatesDer?: Uint8Array[];
  readonly crlDer?: Uint8Array;
}

export interface ReadCertRepOptions {
  /** The client key the envelope was encrypted to. */
  readonly privateKey: KeyObject;
  /** The client certificate, to pick the right recipient; default: the first key-transport recipient. */
  readonly certificateDer?: Uint8Array;
  /** When given, a CertRep signed with another digest is refused (badAlg). */
  readonly digest?: DigestName;
}

export function readCertRep(der: Uint8Array, options: ReadCertRepOptions): CertRep {
  return guarded('badRequest', 'Malformed CertRep', () => {
    const sd = parseSignedData(der);
    if (options.digest && sd.digestAlgorithm !== options.digest) throw new ScepError('badAlg', `The CertRep uses ${sd.digestAlgorithm}, not ${options.digest}`);
    const type = numberAttribute(sd.attributes, OID.messageType);
    if (type !== MESSAGE_TYPE_CODES.CertRep) throw new ScepError('badRequest', `messageType ${type ?? 'missing'} is not CertRep`);
    const statusCode = numberAttribute(sd.attributes, OID.pkiStatus);
    const pkiStatus = statusCode === undefined ? undefined : pkiStatusOf(statusCode);
    if (!pkiStatus) throw new ScepError('badRequest', `Bad pkiStatus ${statusCode ?? 'missing'}`);
    const transactionId = stringAttribute(sd.attributes, OID.transactionID);
    const recipientNonce = octetAttribute(sd.attributes, OID.recipientNonce);
    const senderNonce = octetAttribute(sd.attributes, OID.senderNonce);
    if (transactionId === undefined || !recipientNonce || !senderNonce) throw new ScepError('badRequest', 'The CertRep lacks transactionID or a nonce');
    const { certificate, valid } = verifySigner(sd);
    let rep: CertRep = {
      pkiStatus,
      transactionId,
      recipientNonce: Uint8Array.from(recipientNonce),
      senderNonce: Uint8Array.from(senderNonce),
      signatureValid: valid,
      signerCertificateDer: Uint8Array.from(certificate.der),
      digestAlgorithm: sd.digestAlgorithm,
    };
    if (pkiStatus === 'FAILURE') {
      const code = numberAttribute(sd.attributes, OID.failInfo);
      const failInfo = code === undefined ? undefined : failInfoOf(code);
      const failInfoText = stringAttribute(sd.attributes, OID.failInfoText);
      rep = { ...rep, ...(failInfo ? { failInfo } : {}), ...(failInfoText !== undefined ? { failInfoText } : {}) };
    }
    if (pkiStatus === 'SUCCESS') {
      if (!sd.eContent) throw new ScepError('badRequest', 'A SUCCESS CertRep without content');
      const envelope = parseEnvelope(sd.eContent);
      const mine = options.certificateDer ? certificateFields(options.certificateDer) : undefined;
      const isOurs = (r: EnvelopeRecipient): boolean =>
        !mine ||
        (r.type === 'issuerAndSerial'
          ? sameBytes(r.issuerDer, mine.issuerDer) && sameBytes(r.serial, mine.serial)
          : sameBytes(r.subjectKeyIdentifier, mine.subjectKeyIdentifier));
      const inner = decryptEnvelope(envelope, options.privateKey, isOurs, Object.keys(CIPHERS));
      const { certificatesDer, crlsDer } = readDegenerateSignedData(inner);
      rep = {
        ...rep,
        ...(envelope.contentEncryption ? { contentEncryption: envelope.contentEncryption } : {}),
        ...(certificatesDer.length ? { certificatesDer } : {}),
        ...(crlsDer[0] ? { crlDer: crlsDer[0] } : {}),
      };
    }
    return rep;
  });
}
