/**
 * Writes a PKCS#12 file (RFC 7292) as OpenSSL 3 does by default: the certificates in an EncryptedData and
 * the private key in a shroudedKeyBag, both PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC), and an HMAC-SHA256
 * MAC over the AuthenticatedSafe keyed by the PKCS#12 KDF. The leaf certificate and the key carry the
 * same localKeyId (SHA-1 of the leaf) and the friendlyName when one is given.
 */
import { createCipheriv, createHash, createHmac, createPrivateKey, createPublicKey, pbkdf2Sync, randomBytes } from 'node:crypto';
import { ProblemError } from '../../errors/index.js';
import { TAG } from '../der/reader.js';
import { explicit, implicit, octets, oid, seq, setOf, smallInt, tlv, nul } from '../der/writer.js';
import { readCertificate } from '../x509/structure.js';
import { whole } from '../der/reader.js';
import { bmpPassword, KDF_ID, pkcs12Kdf } from './kdf.js';

export interface Pkcs12Input {
  privateKeyPkcs8Der: Uint8Array;
  /** Leaf first, then its chain. */
  certificatesDer: Uint8Array[];
  password: string;
  friendlyName?: string;
}

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  friendlyName: '1.2.840.113549.1.9.20',
  localKeyId: '1.2.840.113549.1.9.21',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  hmacWithSha256: '1.2.840.113549.2.9',
  aes256Cbc: '2.16.840.1.101.3.4.1.42',
  sha256: '2.16.840.1.101.3.4.2.1',
} as const;

/** OpenSSL's default (PKCS12_DEFAULT_ITER) for both PBKDF2 and the MAC. */
const ITERATIONS = 2048;

const invalid = (detail: string): ProblemError => new ProblemError('HTTP-003', { detail });

/** PBES2 encryption of `plain`: the AlgorithmIdentifier and the ciphertext. */
function pbes2Encrypt(plain: Uint8Array, password: Uint8Array): { algorithm: Uint8Array; ciphertext: Uint8Array } {
  const salt = randomBytes(16);
  const iv = randomBytes(16);
  const key = pbkdf2Sync(password, salt, ITERATIONS, 32, 'sha256');
  const cipher = createCipheriv('aes-256-cbc', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
  const algorithm = seq(
    oid(OID.pbes2),
    seq(seq(oid(OID.pbkdf2), seq(octets(salt), smallInt(ITERATIONS), seq(oid(OID.hmacWithSha256), nul()))), seq(oid(OID.aes256Cbc), octets(iv))),
  );
  return { algorithm, ciphertext };
}

const attribute = (id: string, valueDer: Uint8Array): Uint8Array => seq(oid(id), setOf(valueDer));

/** BMPString (UTF-16BE) of a friendly name. */
const bmpString = (text: string): Uint8Array => {
  const le = Buffer.from(text, 'utf16le');
  for (let i = 0; i < le.length; i += 2) [le[i], le[i + 1]] = [le[i + 1]!, le[i]!];
  return tlv(TAG.BMP_STRING, le);
};

/** ContentInfo of type data around `content`. */
const dataContent = (content: Uint8Array): Uint8Array => seq(oid(OID.data), explicit(0, octets(content)));

/** The PKCS#12 file (DER). A key that is not PKCS#8, or that the leaf does not certify, is HTTP-003. */
export function encodePkcs12(input: Pkcs12Input): Uint8Array {
  let publicSpki: Buffer;
  try {
    const key = createPrivateKey({ key: Buffer.from(input.privateKeyPkcs8Der), format: 'der', type: 'pkcs8' });
    publicSpki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  } catch {
    throw invalid('the private key is not a PKCS#8 key node can read');
  }
  const leaf = input.certificatesDer[0];
  if (leaf) {
    let leafSpki: Uint8Array;
    try {
      leafSpki = whole(leaf, readCertificate(leaf).spki);
    } catch {
      throw invalid('the first certificate is unreadable');
    }
    if (!publicSpki.equals(leafSpki)) throw invalid('the first certificate does not certify the private key');
  }
  const utf8 = Buffer.from(input.password, 'utf8');
  const localKeyId = createHash('sha1').update(leaf ?? publicSpki).digest();
  const keyAttributes = [attribute(OID.localKeyId, octets(localKeyId)), ...(input.friendlyName !== undefined ? [attribute(OID.friendlyName, bmpString(input.friendlyName))] : [])];

  const certBags = input.certificatesDer.map((der, i) => {
    const bag = seq(oid(OID.x509Certificate), explicit(0, octets(der)));
    return seq(oid(OID.certBag), explicit(0, bag), ...(i === 0 ? [setOf(...keyAttributes)] : []));
  });
  const certs = pbes2Encrypt(seq(...certBags), utf8);
  // EncryptedData { version 0, EncryptedContentInfo { data, algorithm, [0] IMPLICIT ciphertext } }
  const encryptedData = seq(smallInt(0), seq(oid(OID.data), certs.algorithm, implicit(0, certs.ciphertext)));
  const certsInfo = seq(oid(OID.encryptedData), explicit(0, encryptedData));

  const key = pbes2Encrypt(input.privateKeyPkcs8Der, utf8);
  const keyBag = seq(oid(OID.shroudedKeyBag), explicit(0, seq(key.algorithm, octets(key.ciphertext))), setOf(...keyAttributes));
  const keyInfo = dataContent(seq(keyBag));

  const authSafe = seq(...(input.certificatesDer.length ? [certsInfo] : []), keyInfo);
  const macSalt = randomBytes(16);
  const macKey = pkcs12Kdf('sha256', bmpPassword(input.password), macSalt, KDF_ID.mac, ITERATIONS, 32);
  const mac = createHmac('sha256', macKey).update(authSafe).digest();
  const macData = seq(seq(seq(oid(OID.sha256), nul()), octets(mac)), octets(macSalt), smallInt(ITERATIONS));
  return seq(smallInt(3), dataContent(authSafe), macData);
}
