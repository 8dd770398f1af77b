/**
 * The pkcsPKIEnvelope (RFC 8894 §3.2.2): a CMS EnvelopedData (RFC 5652 §6) with RSA key transport, or an
 * AuthEnvelopedData (RFC 5083) for AES-GCM. Parsed once, when the pkiMessage is parsed, into the fields
 * needed to open it; opened by `openEnvelope` for the RA and by the client code for the CertRep.
 *
 *   openEnvelope(message | envelopeDer, { raPrivateKey, raCertificateDer, allowedCiphers }) → inner DER
 *
 * Failures: badAlg (cipher refused or unknown, key transport not rsaEncryption), badCertId (no recipient is
 * the RA certificate), badMessageCheck (the content does not decrypt, or decrypts to something that is not a
 * DER value: a wrong key, a wrong challenge of a corrupted envelope and a bad RSA padding all end here).
 */
import { randomBytes, createCipheriv, type KeyObject } from 'node:crypto';
import { CIPHERS, cipherByOid, OID, type ContentCipher } from './algorithms.js';
import { certificateFields, publicKeyOf, sameBytes, type CertificateFields } from './certificate-fields.js';
import { decryptCbc, decryptGcm, encryptCbc } from './content-cipher.js';
import { children, content, expectTag, integerHex, malformed, octets, parseDer, raw, readOid, readSmallInt, TAG, type Tlv } from './der.js';
import { algorithm, ctx, ctxPrimitive, integerContent, NULL, octetString, oid, seq, set, smallInteger } from './der-writer.js';
import { guarded, ScepError } from './errors.js';
import { unwrapContentKey, wrapContentKey } from './key-transport.js';

interface RecipientBase {
  /** keyEncryptionAlgorithm OID (rsaEncryption is the one supported). */
  readonly keyEncryptionAlgorithm: string;
  readonly encryptedKey: Uint8Array;
}
export type EnvelopeRecipient =
  | (RecipientBase & { readonly type: 'issuerAndSerial'; readonly issuerDer: Uint8Array; readonly serial: Uint8Array; readonly serialHex: string })
  | (RecipientBase & { readonly type: 'subjectKeyIdentifier'; readonly subjectKeyIdentifier: Uint8Array });

export interface ScepEnvelope {
  /** The ContentInfo DER as carried in the pkiMessage (what `openssl cms -decrypt -inform DER` reads). */
  readonly der: Uint8Array;
  readonly kind: 'enveloped' | 'authEnveloped';
  /** null when the algorithm is not one this codec knows (see contentEncryptionOid). */
  readonly contentEncryption: ContentCipher | null;
  readonly contentEncryptionOid: string;
  /** Key-transport recipients (other RecipientInfo kinds are skipped). */
  readonly recipients: readonly EnvelopeRecipient[];
  /** CBC IV or GCM nonce. */
  readonly iv: Uint8Array;
  readonly encryptedContent: Uint8Array;
  /** AuthEnvelopedData only: the tag and the DER of authAttrs (additional authenticated data). */
  readonly mac?: Uint8Array;
  readonly aad?: Uint8Array;
}

function readRecipient(ri: Tlv): EnvelopeRecipient | undefined {
  if (ri.tag !== TAG.SEQUENCE) return undefined; // kari [1], kekri [2], pwri [3], ori [4]
  const f = children(ri);
  readSmallInt(f[0], 'KeyTransRecipientInfo.version');
  const rid = f[1];
  const keyEncryptionAlgorithm = readOid(children(expectTag(f[2], TAG.SEQUENCE, 'keyEncryptionAlgorithm'))[0], 'keyEncryptionAlgorithm');
  const encryptedKey = octets(expectTag(f[3], TAG.OCTET_STRING, 'encryptedKey'), 'encryptedKey');
  if (rid?.tag === TAG.SEQUENCE) {
    const [issuer, serial] = children(rid);
    return {
      type: 'issuerAndSerial',
      issuerDer: raw(expectTag(issuer, TAG.SEQUENCE, 'rid.issuer')),
      serial: content(expectTag(serial, TAG.INTEGER, 'rid.serialNumber')),
      serialHex: integerHex(serial, 'rid.serialNumber'),
      keyEncryptionAlgorithm,
      encryptedKey,
    };
  }
  if (rid?.tag === 0x80) return { type: 'subjectKeyIdentifier', subjectKeyIdentifier: content(rid), keyEncryptionAlgorithm, encryptedKey };
  throw malformed('KeyTransRecipientInfo.rid');
}

/** Reads a ContentInfo holding an EnvelopedData or an AuthEnvelopedData. ScepError('badRequest') if neither. */
export function parseEnvelope(der: Uint8Array): ScepEnvelope {
  return guarded('badRequest', 'Malformed envelope', () => {
    const [typeOid, explicit] = children(expectTag(parseDer(der), TAG.SEQUENCE, 'ContentInfo'));
    const contentType = readOid(typeOid, 'ContentInfo.contentType');
    if (contentType !== OID.envelopedData && contentType !== OID.authEnvelopedData) {
      throw new ScepError('badRequest', `The envelope is a ${contentType}, not an EnvelopedData`);
    }
    const kind = contentType === OID.envelopedData ? 'enveloped' : 'authEnveloped';
    const f = children(expectTag(children(expectTag(explicit, 0xa0, 'ContentInfo.content'))[0], TAG.SEQUENCE, 'EnvelopedData'));
    let i = 0;
    readSmallInt(f[i++], 'EnvelopedData.version');
    if (f[i]?.tag === 0xa0) i++; // originatorInfo
    const recipients = children(expectTag(f[i++], TAG.SET, 'recipientInfos'))
      .map(readRecipient)
      .filter((r): r is EnvelopeRecipient => r !== undefined);
    const eci = children(expectTag(f[i++], TAG.SEQUENCE, 'encryptedContentInfo'));
    readOid(eci[0], 'encryptedContentInfo.contentType');
    const [algOid, params] = children(expectTag(eci[1], TAG.SEQUENCE, 'contentEncryptionAlgorithm'));
    const contentEncryptionOid = readOid(algOid, 'contentEncryptionAlgorithm');
    const contentEncryption = cipherByOid(contentEncryptionOid) ?? null;
    const enc = eci[2];
    if (!enc || (enc.tag !== 0x80 && enc.tag !== 0xa0)) throw new ScepError('badRequest', 'The envelope has no encrypted content');
    const encryptedContent = octets(enc, 'encryptedContent');
    let iv: Uint8Array = new Uint8Array(0);
    if (contentEncryption && CIPHERS[contentEncryption].mode === 'gcm') {
      iv = content(expectTag(children(expectTag(params, TAG.SEQUENCE, 'GCMParameters'))[0], TAG.OCTET_STRING, 'aes-nonce'));
    } else if (contentEncryption) {
      iv = content(expectTag(params, TAG.OCTET_STRING, 'IV'));
    }
    if (kind === 'enveloped') return { der, kind, contentEncryption, contentEncryptionOid, recipients, iv, encryptedContent };
    let aad: Uint8Array | undefined;
    if (f[i]?.tag === 0xa1) {
      // RFC 5083 §2.1: the MAC covers authAttrs re-tagged as a SET OF.
      aad = Uint8Array.from(raw(f[i++]!));
      aad[0] = TAG.SET;
    }
    const mac = content(expectTag(f[i], TAG.OCTET_STRING, 'mac'));
    return { der, kind, contentEncryption, contentEncryptionOid, recipients, iv, encryptedContent, mac, ...(aad ? { aad } : {}) };
  });
}

function matches(r: EnvelopeRecipient, cert: CertificateFields): boolean {
  return r.type === 'issuerAndSerial'
    ? sameBytes(r.issuerDer, cert.issuerDer) && sameBytes(r.serial, cert.serial)
    : sameBytes(r.subjectKeyIdentifier, cert.subjectKeyIdentifier);
}

export interface OpenEnvelopeOptions {
  readonly raPrivateKey: KeyObject;
  /** The certificate the client encrypted to (it names the recipient to use). */
  readonly raCertificateDer: Uint8Array;
  /** Content ciphers accepted, by name ('aes-256-cbc', 'des-cbc', …); anything else is badAlg. */
  readonly allowedCiphers: readonly string[];
}

/**
 * Decrypts the envelope for the RA: the inner DER (a PKCS#10 request for PKCSReq/RenewalReq, an
 * IssuerAndSubject for CertPoll, an IssuerAndSerialNumber for GetCert/GetCRL). One RSA private operation.
 */
export function openEnvelope(source: { readonly envelope: ScepEnvelope } | ScepEnvelope | Uint8Array, options: OpenEnvelopeOptions): Uint8Array {
  const envelope = source instanceof Uint8Array ? parseEnvelope(source) : 'envelope' in source ? source.envelope : source;
  return guarded('badMessageCheck', 'The envelope does not open', () => {
    const ra = certificateFields(options.raCertificateDer);
    return decryptEnvelope(envelope, options.raPrivateKey, (r) => matches(r, ra), options.allowedCiphers);
  });
}

/** Shared by the RA and the client: pick the recipient, unwrap the key, decrypt, check the result is DER. */
export function decryptEnvelope(
  envelope: ScepEnvelope,
  privateKey: KeyObject,
  isOurs: (r: EnvelopeRecipient) => boolean,
  allowedCiphers: readonly string[],
): Uint8Array {
  const cipher = envelope.contentEncryption;
  if (!cipher) throw new ScepError('badAlg', `Unsupported content encryption ${envelope.contentEncryptionOid}`);
  if (!allowedCiphers.includes(cipher)) throw new ScepError('badAlg', `Content encryption ${cipher} is not allowed`);
  const spec = CIPHERS[cipher];
  if ((spec.mode === 'gcm') !== (envelope.kind === 'authEnveloped')) throw new ScepError('badAlg', `${cipher} in an ${envelope.kind === 'enveloped' ? 'EnvelopedData' : 'AuthEnvelopedData'}`);
  const recipient = envelope.recipients.find(isOurs);
  if (!recipient) throw new ScepError('badCertId', 'The envelope is not encrypted to this RA certificate');
  if (recipient.keyEncryptionAlgorithm !== OID.rsaEncryption) throw new ScepError('badAlg', `Unsupported key transport ${recipient.keyEncryptionAlgorithm}`);
  const key = unwrapContentKey(privateKey, recipient.encryptedKey, spec.keyLength);
  const plaintext =
    spec.mode === 'gcm'
      ? decryptGcm(cipher, key, envelope.iv, envelope.encryptedContent, envelope.mac ?? new Uint8Array(0), envelope.aad)
      : decryptCbc(cipher, key, envelope.iv, envelope.encryptedContent);
  if (!plaintext || !isDerSequence(plaintext)) throw new ScepError('badMessageCheck', 'The envelope does not decrypt with this key (wrong recipient key or corrupted envelope)');
  return plaintext;
}

function isDerSequence(b: Uint8Array): boolean {
  try {
    return parseDer(b).tag === TAG.SEQUENCE;
  } catch {
    return false;
  }
}

export interface SealRecipient {
  readonly certificate: CertificateFields;
  readonly publicKey: KeyObject;
}

/** A recipient from its DER certificate (RSA key expected). */
export function sealRecipient(certificateDer: Uint8Array): SealRecipient {
  const certificate = certificateFields(certificateDer);
  return { certificate, publicKey: publicKeyOf(certificate.spkiDer) };
}

/** Encrypts `inner` to the recipients (named by issuer and serial): the ContentInfo DER. One public RSA op each. */
export function sealEnvelope(inner: Uint8Array, recipients: readonly SealRecipient[], cipher: ContentCipher): Uint8Array {
  const spec = CIPHERS[cipher];
  if (!spec) throw new ScepError('badAlg', `Unknown cipher ${String(cipher)}`);
  if (recipients.length === 0) throw new TypeError('sealEnvelope needs at least one recipient');
  const key = randomBytes(spec.keyLength);
  const iv = randomBytes(spec.ivLength);
  const infos = recipients.map((r) =>
    seq(
      smallInteger(0),
      seq(r.certificate.issuerDer, integerContent(r.certificate.serial)),
      algorithm(OID.rsaEncryption, NULL),
      octetString(wrapContentKey(r.publicKey, key)),
    ),
  );
  if (spec.mode === 'gcm') {
    const c = createCipheriv(cipher as 'aes-256-gcm', key, iv, { authTagLength: 16 });
    const encrypted = Buffer.concat([c.update(inner), c.final()]);
    const auth = seq(
      smallInteger(0),
      set(...infos),
      seq(oid(OID.data), algorithm(spec.oid, seq(octetString(iv), smallInteger(16))), ctxPrimitive(0, encrypted)),
      octetString(c.getAuthTag()),
    );
    return seq(oid(OID.authEnvelopedData), ctx(0, auth));
  }
  const encrypted = encryptCbc(cipher, key, iv, inner);
  const enveloped = seq(smallInteger(0), set(...infos), seq(oid(OID.data), algorithm(spec.oid, octetString(iv)), ctxPrimitive(0, encrypted)));
  return seq(oid(OID.envelopedData), ctx(0, enveloped));
}
