/**
 * What an SCEP client needs before its first request (RFC 8894 §2.3): a self-signed certificate for its
 * key, to sign the pkiMessage and receive the encrypted CertRep, and a PKCS#10 request with a
 * challengePassword. For tests and benchmarks; a real deployment's clients bring their own.
 *
 *   selfSignedForScep(privateKey, cn, { days?, digest? }) → { pem, der }
 *   csrForScep({ privateKey, cn, challengePassword?, digest? }) → DER
 */
import { createHash, createPublicKey, randomBytes, sign, constants, type KeyObject } from 'node:crypto';
import { ECDSA_SIGNATURE_OIDS, OID, RSA_SIGNATURE_OIDS, type DigestName } from './algorithms.js';
import { keyIdentifierOf, derToPem } from './certificate-fields.js';
import { algorithm, ctx, NULL, octetString, oid, seq, set, smallInteger, time, tlv, unsignedInteger, utf8String } from './der-writer.js';

function nameCn(cn: string): Uint8Array {
  return seq(set(seq(oid(OID.commonName), utf8String(cn))));
}

function signatureAlgorithm(key: KeyObject, digest: DigestName): Uint8Array {
  if (key.asymmetricKeyType === 'rsa') return algorithm(RSA_SIGNATURE_OIDS[digest], NULL);
  const ec = ECDSA_SIGNATURE_OIDS[digest];
  if (key.asymmetricKeyType === 'ec' && ec) return algorithm(ec);
  throw new TypeError(`Unsupported key type ${key.asymmetricKeyType ?? 'secret'} for ${digest}`);
}

/** tbs, signatureAlgorithm, BIT STRING(signature): the shape of certificates and PKCS#10 requests. */
function signed(tbs: Uint8Array, key: KeyObject, digest: DigestName): Uint8Array {
  const signature = sign(digest, tbs, key.asymmetricKeyType === 'rsa' ? { key, padding: constants.RSA_PKCS1_PADDING } : key);
  return seq(tbs, signatureAlgorithm(key, digest), tlv(0x03, [Uint8Array.of(0), signature]));
}

function spkiOf(privateKey: KeyObject): Uint8Array {
  return createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
}

/** A v3 self-signed certificate CN=`cn` for the client key (valid from a minute ago for `days`, default 365). */
export function selfSignedForScep(privateKey: KeyObject, cn: string, options: { days?: number; digest?: DigestName } = {}): { pem: string; der: Uint8Array } {
  const digest = options.digest ?? 'sha256';
  const spki = spkiOf(privateKey);
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive, 16 bytes
  const now = Date.now();
  const name = nameCn(cn);
  const ski = seq(oid(OID.subjectKeyIdentifier), octetString(octetString(keyIdentifierOf(spki))));
  const tbs = seq(
    ctx(0, smallInteger(2)),
    unsignedInteger(serial),
    signatureAlgorithm(privateKey, digest),
    name,
    seq(time(new Date(now - 60_000)), time(new Date(now + (options.days ?? 365) * 86_400_000))),
    name,
    spki,
    ctx(3, seq(ski)),
  );
  const der = signed(tbs, privateKey, digest);
  return { pem: derToPem(der), der };
}

const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

/** A PKCS#10 request CN=`cn` for the key, with a challengePassword attribute when given. */
export function csrForScep(o: { privateKey: KeyObject; cn: string; challengePassword?: string; digest?: DigestName }): Uint8Array {
  const attributes: Uint8Array[] = [];
  if (o.challengePassword !== undefined) {
    const value = PRINTABLE.test(o.challengePassword) ? tlv(0x13, [Buffer.from(o.challengePassword, 'latin1')]) : utf8String(o.challengePassword);
    attributes.push(seq(oid(OID.challengePassword), set(value)));
  }
  const info = seq(smallInteger(0), nameCn(o.cn), spkiOf(o.privateKey), ctx(0, ...attributes));
  return signed(info, o.privateKey, o.digest ?? 'sha256');
}

/** A transactionID as certmonger makes it: the hex SHA-256 of the client's public key. */
export function transactionIdFor(privateKey: KeyObject): string {
  return createHash('sha256').update(spkiOf(privateKey)).digest('hex');
}
