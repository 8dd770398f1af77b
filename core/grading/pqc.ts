import { readTlv } from '../pki/der/reader.js';
import { readPublicKey } from '../pki/x509/keys.js';

/**
 * Post-quantum readiness of public-key algorithms. RSA, finite-field DSA and elliptic curves (ECDSA, EdDSA)
 * fall to Shor's algorithm on a cryptographically relevant quantum computer; ML-DSA (FIPS 204) and SLH-DSA
 * (FIPS 205) do not. A hybrid is a classical key paired with a post-quantum one: a composite key
 * (draft-ietf-lamps-pq-composite-sigs) or a classical certificate carrying an alternative post-quantum key
 * (ITU-T X.509 (2019) §9.8, subjectAltPublicKeyInfo).
 */
export type QuantumClass = 'post-quantum' | 'hybrid' | 'quantum-vulnerable' | 'unknown';

/** ML-DSA by OID (keys.ts names their keyType ml-dsa-44/65/87; signatures ML-DSA-44/…). */
const ML_DSA_OIDS = new Set(['2.16.840.1.101.3.4.3.17', '2.16.840.1.101.3.4.3.18', '2.16.840.1.101.3.4.3.19']);
/** SLH-DSA (FIPS 205): id-slh-dsa-sha2-128s … id-slh-dsa-shake-256f, 2.16.840.1.101.3.4.3.20–31. */
const SLH_DSA_OIDS = new Set(Array.from({ length: 12 }, (_, i) => `2.16.840.1.101.3.4.3.${20 + i}`));
/**
 * Composite ML-DSA (draft-ietf-lamps-pq-composite-sigs): the IETF arc 1.3.6.1.5.5.7.6.37–54 and the earlier
 * drafts' prototype arc 2.16.840.1.114027.80.8.1.
 */
const isComposite = (oid: string): boolean => {
  const iana = /^1\.3\.6\.1\.5\.5\.7\.6\.(\d+)$/.exec(oid);
  if (iana) return Number(iana[1]) >= 37 && Number(iana[1]) <= 54;
  return oid.startsWith('2.16.840.1.114027.80.8.1.');
};

/** subjectAltPublicKeyInfo (X.509 (2019)): the alternative key of a hybrid certificate. */
export const ALT_PUBLIC_KEY_EXTENSION = '2.5.29.72';

const CLASSICAL = /^(rsa-|ec-|ed-|dsa|x-)/;

const ML_DSA_SETS: Record<string, string> = { '2.16.840.1.101.3.4.3.17': 'ml-dsa-44', '2.16.840.1.101.3.4.3.18': 'ml-dsa-65', '2.16.840.1.101.3.4.3.19': 'ml-dsa-87' };

/** The post-quantum name of an algorithm given by keyType (ml-dsa-65), signature name (ML-DSA-65) or OID; null if classical. */
export function postQuantumName(algorithm: string): string | null {
  const a = algorithm.toLowerCase();
  if (/^ml-dsa-(44|65|87)$/.test(a)) return a;
  if (ML_DSA_OIDS.has(algorithm)) return ML_DSA_SETS[algorithm]!;
  if (a.startsWith('slh-dsa')) return a;
  if (SLH_DSA_OIDS.has(algorithm)) return `slh-dsa (${algorithm})`;
  if (isComposite(algorithm)) return `composite ML-DSA (${algorithm})`;
  return null;
}

/** How a key type (or a key algorithm OID, for those keys.ts does not name) stands against a quantum attacker. */
export function quantumClassOfKey(keyType: string): QuantumClass {
  if (isComposite(keyType)) return 'hybrid';
  if (postQuantumName(keyType)) return 'post-quantum';
  if (CLASSICAL.test(keyType)) return 'quantum-vulnerable';
  return 'unknown';
}

/** Same for a signature algorithm (its name as the decoder gives it, or its OID). */
export function quantumClassOfSignature(signingAlgorithm: string): QuantumClass {
  if (isComposite(signingAlgorithm)) return 'hybrid';
  if (postQuantumName(signingAlgorithm)) return 'post-quantum';
  if (/rsa|ecdsa|ed25519|ed448|dsa/i.test(signingAlgorithm)) return 'quantum-vulnerable';
  return 'unknown';
}

/** The key type of a certificate's alternative public key (hex of the subjectAltPublicKeyInfo extension), or null. */
export function altKeyType(extensionHex: string | undefined): string | null {
  if (!extensionHex) return null;
  try {
    const der = new Uint8Array(Buffer.from(extensionHex, 'hex'));
    return readPublicKey(der, readTlv(der, 0)).keyType;
  } catch {
    return null;
  }
}
