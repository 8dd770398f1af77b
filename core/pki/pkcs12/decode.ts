import { ProblemError } from '../../errors/index.js';
import { children, DerError, expectTag, readOid, readSmallInt, readString, readTop, TAG, value, whole, type Tlv } from '../der/reader.js';
import { MAX_DEPTH, problemFor } from '../detect.js';
import { berToDer } from '../pkcs7/ber.js';
import { parseCertificate } from '../x509/parse.js';
import type { CertificateInfo } from '../x509/model.js';
import { WorkBudget } from './budget.js';
import { bmpPassword } from './kdf.js';
import { describePrivateKey, type KeySummary } from './keys.js';
import { macMatches, readMacData, type MacData } from './mac.js';
import { decryptPbe, wrongPassword, type EncryptionKind, type PasswordForms } from './pbe.js';

export interface Pkcs12Key extends KeySummary {
  /** SHA-1 thumbprint of the certificate holding this key's public key, when the file has it. */
  matchesCertificate?: string;
  friendlyName?: string;
}

export interface DecodedPkcs12 {
  certificates: CertificateInfo[];
  keys: Pkcs12Key[];
  /** Every friendlyName attribute, first seen first, without repeats. */
  friendlyNames: string[];
  /** The MAC's digest (sha1, sha256…), null for a file without MAC. */
  macAlgorithm: string | null;
  macIterations: number | null;
  /** `legacy` when anything is encrypted with a PKCS#12 PBE (RC2, 3DES); `modern` otherwise (PBES2 or nothing). */
  encryption: EncryptionKind;
  /** Encryption algorithms met, as OpenSSL names them. */
  encryptionAlgorithms: string[];
}

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  keyBag: '1.2.840.113549.1.12.10.1.1',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  safeContentsBag: '1.2.840.113549.1.12.10.1.6',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  friendlyName: '1.2.840.113549.1.9.20',
} as const;

/** safeContentsBag may nest SafeContents; real files nest at most once. */
const MAX_BAG_NESTING = 4;

interface State {
  password: PasswordForms;
  /** The MAC proved the password: a decryption failure after that is a broken file, not a wrong password. */
  macVerified: boolean;
  certificates: Uint8Array[];
  keys: { pkcs8: Uint8Array; friendlyName?: string }[];
  friendlyNames: string[];
  algorithms: Set<string>;
  kind: EncryptionKind;
  budget: WorkBudget;
}

/**
 * Opens a PKCS#12 file (RFC 7292) with `password`: legacy files (RC2-40 / 3DES, SHA-1 MAC) and modern
 * ones (PBES2 / PBKDF2 / AES, SHA-256 MAC); BER framing is accepted. Wrong password → PKI-003; another
 * kind of object → PKI-002; unsupported algorithms (RC4, public-key privacy / integrity modes) →
 * PKI-006; broken → PKI-001. The password is never logged or echoed; private keys are only described.
 */
export function decodePkcs12(input: Uint8Array, password: string): DecodedPkcs12 {
  let der = input;
  try {
    der = berToDer(input, MAX_DEPTH);
    return readPfx(der, password);
  } catch (err) {
    throw problemFor(err, der, 'pkcs12');
  }
}

/**
 * What decodePkcs12 refuses before any key derivation, in the same order and with the same problems:
 * framing (BER/DER, nesting), the PFX shape, another kind of object, the public-key integrity mode, an
 * unsupported MAC, a MAC iteration count over the budget. It reads the bytes once and derives nothing, so
 * the routes check it on the event loop: a malformed file answers at once and takes no place on the
 * worker pool, where the key derivations run (core/workers).
 */
export function checkPkcs12Framing(input: Uint8Array): void {
  let der = input;
  try {
    der = berToDer(input, MAX_DEPTH);
    const { mac } = readFraming(der);
    if (mac) new WorkBudget().kdfRounds(mac.iterations);
  } catch (err) {
    throw problemFor(err, der, 'pkcs12');
  }
}

/** PFX { version 3, authSafe ContentInfo (data), macData OPTIONAL }: the authSafe content and the MAC data. */
function readFraming(der: Uint8Array): { content: Uint8Array; mac: MacData | null } {
  const top = readTop(der, TAG.SEQUENCE, 'PFX');
  const [version, authSafe, macTlv, extra] = children(der, top);
  if (!version || !authSafe || extra) throw new DerError('PFX is version, authSafe and an optional macData', top.start);
  if (readSmallInt(der, expectTag(version, TAG.INTEGER, 'PFX version')) !== 3) throw new DerError('PFX version is not 3', version.start);
  const [contentType, explicit] = children(der, expectTag(authSafe, TAG.SEQUENCE, 'authSafe'));
  const type = readOid(der, contentType ?? authSafe);
  if (type !== OID.data) throw new ProblemError('PKI-006', { detail: `authSafe of type ${type} (public-key integrity mode) is not supported` });
  const content = octets(der, explicitContent(der, explicit, authSafe));
  return { content, mac: macTlv ? readMacData(der, macTlv) : null };
}

function readPfx(der: Uint8Array, password: string): DecodedPkcs12 {
  const { content, mac } = readFraming(der);
  // OpenSSL tries an empty password both as "" (two zero bytes in BMP) and as no password at all.
  const candidates = password === '' ? [bmpPassword(''), bmpPassword('', true)] : [bmpPassword(password)];
  const budget = new WorkBudget();
  const bmp = mac ? candidates.find((c) => macMatches(mac, content, c, budget)) : candidates[0];
  if (!bmp) throw wrongPassword();
  const state: State = {
    password: { bmp, utf8: Buffer.from(password, 'utf8') },
    macVerified: mac !== null,
    budget,
    certificates: [],
    keys: [],
    friendlyNames: [],
    algorithms: new Set(),
    kind: 'modern',
  };

  const safes = parsed(content, 'AuthenticatedSafe');
  for (const info of children(safes, readTop(safes, TAG.SEQUENCE, 'AuthenticatedSafe'))) {
    const [oid, body] = children(safes, expectTag(info, TAG.SEQUENCE, 'ContentInfo'));
    const kind = readOid(safes, oid ?? info);
    if (kind === OID.data) readSafeContents(parsed(octets(safes, explicitContent(safes, body, info)), 'SafeContents'), state, 0);
    else if (kind === OID.encryptedData) readSafeContents(decryptedData(safes, explicitContent(safes, body, info), state), state, 0);
    else throw new ProblemError('PKI-006', { detail: `content of type ${kind} (public-key privacy mode) is not supported` });
  }

  const certificates = state.certificates.map((c) => parseCertificate(c));
  const keys = state.keys.map(({ pkcs8, friendlyName }): Pkcs12Key => {
    const summary: Pkcs12Key = describePrivateKey(pkcs8);
    const holder = certificates.find((c) => summary.publicKeyThumbprint !== undefined && c.publicKeyThumbprint === summary.publicKeyThumbprint);
    if (holder) summary.matchesCertificate = holder.thumbprint;
    if (friendlyName !== undefined) summary.friendlyName = friendlyName;
    return summary;
  });
  return {
    certificates,
    keys,
    friendlyNames: state.friendlyNames,
    macAlgorithm: mac?.algorithm ?? null,
    macIterations: mac?.iterations ?? null,
    encryption: state.kind,
    encryptionAlgorithms: [...state.algorithms],
  };
}

/** SafeContents ::= SEQUENCE OF SafeBag { bagId, [0] EXPLICIT bagValue, bagAttributes SET OPTIONAL }. */
function readSafeContents(buf: Uint8Array, state: State, nesting: number): void {
  if (nesting > MAX_BAG_NESTING) throw new DerError('safeContentsBag nested too deeply', 0);
  for (const bag of children(buf, readTop(buf, TAG.SEQUENCE, 'SafeContents'))) {
    const [idTlv, explicit, attributes] = children(buf, expectTag(bag, TAG.SEQUENCE, 'SafeBag'));
    const bagId = readOid(buf, idTlv ?? bag);
    const bagValue = explicitContent(buf, explicit, bag);
    const friendlyName = attributes ? friendlyNameOf(buf, attributes) : undefined;
    if (friendlyName !== undefined && !state.friendlyNames.includes(friendlyName)) state.friendlyNames.push(friendlyName);
    switch (bagId) {
      case OID.keyBag:
        state.keys.push({ pkcs8: whole(buf, bagValue), ...(friendlyName !== undefined ? { friendlyName } : {}) });
        break;
      case OID.shroudedKeyBag: {
        const [alg, encrypted] = children(buf, expectTag(bagValue, TAG.SEQUENCE, 'EncryptedPrivateKeyInfo'));
        const plain = decrypt(buf, alg ?? bagValue, value(buf, expectTag(encrypted ?? bagValue, TAG.OCTET_STRING, 'encrypted key')), state);
        state.keys.push({ pkcs8: parsed(plain, 'PrivateKeyInfo', !state.macVerified), ...(friendlyName !== undefined ? { friendlyName } : {}) });
        break;
      }
      case OID.certBag: {
        const [certId, certValue] = children(buf, expectTag(bagValue, TAG.SEQUENCE, 'CertBag'));
        // SDSI certificates (and anything else) are not X.509: skipped.
        if (readOid(buf, certId ?? bagValue) === OID.x509Certificate) state.certificates.push(Uint8Array.from(octets(buf, explicitContent(buf, certValue, bagValue))));
        break;
      }
      case OID.safeContentsBag:
        readSafeContents(whole(buf, bagValue), state, nesting + 1);
        break;
      default:
        // crlBag, secretBag and private bag types carry nothing the decoder reports.
        break;
    }
  }
}

/** EncryptedData { version, EncryptedContentInfo { contentType, algorithm, [0] IMPLICIT encryptedContent } }. */
function decryptedData(buf: Uint8Array, encryptedData: Tlv, state: State): Uint8Array {
  const [, info] = children(buf, expectTag(encryptedData, TAG.SEQUENCE, 'EncryptedData'));
  const [, alg, content] = children(buf, expectTag(info ?? encryptedData, TAG.SEQUENCE, 'EncryptedContentInfo'));
  if (!alg || !content) throw new DerError('EncryptedContentInfo without algorithm or content', encryptedData.start);
  // [0] IMPLICIT OCTET STRING: primitive in DER, constructed (chunks) in BER.
  let ciphertext: Uint8Array;
  if (content.tag === 0x80) ciphertext = value(buf, content);
  else if (content.tag === 0xa0) ciphertext = Buffer.concat(children(buf, content).map((c) => value(buf, expectTag(c, TAG.OCTET_STRING, 'encrypted content chunk'))));
  else throw new DerError('encryptedContent must be [0]', content.start);
  return parsed(decrypt(buf, alg, ciphertext, state), 'SafeContents', !state.macVerified);
}

function decrypt(buf: Uint8Array, alg: Tlv, data: Uint8Array, state: State): Uint8Array {
  const { plain, kind, algorithm } = decryptPbe(buf, alg, data, state.password, state.budget);
  state.algorithms.add(algorithm);
  if (kind === 'legacy') state.kind = 'legacy';
  return plain;
}

/**
 * DER of decrypted or embedded content (BER accepted). Without a MAC, garbage after decryption is how
 * a wrong password shows when the padding happened to look right.
 */
function parsed(bytes: Uint8Array, what: string, decryptedWithoutMac = false): Uint8Array {
  try {
    const der = berToDer(bytes, MAX_DEPTH);
    readTop(der, TAG.SEQUENCE, what);
    return der;
  } catch (err) {
    if (err instanceof DerError && decryptedWithoutMac) throw wrongPassword();
    throw err;
  }
}

/** The single value inside an EXPLICIT [0]. */
function explicitContent(buf: Uint8Array, tlv: Tlv | undefined, parent: Tlv): Tlv {
  if (!tlv || tlv.tag !== 0xa0) throw new DerError('expected [0] content', tlv?.start ?? parent.start);
  const [inner, extra] = children(buf, tlv);
  if (!inner || extra) throw new DerError('[0] must hold exactly one value', tlv.start);
  return inner;
}

const octets = (buf: Uint8Array, tlv: Tlv): Uint8Array => value(buf, expectTag(tlv, TAG.OCTET_STRING, 'content'));

/** bagAttributes: the friendlyName (BMPString), if any. */
function friendlyNameOf(buf: Uint8Array, attributes: Tlv): string | undefined {
  for (const attribute of children(buf, expectTag(attributes, TAG.SET, 'bagAttributes'))) {
    const [oid, values] = children(buf, expectTag(attribute, TAG.SEQUENCE, 'attribute'));
    if (!oid || !values || readOid(buf, oid) !== OID.friendlyName) continue;
    const [name] = children(buf, expectTag(values, TAG.SET, 'attribute values'));
    if (name) return readString(buf, name);
  }
  return undefined;
}
