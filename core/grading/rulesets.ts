import { days, stepFor, stepText, validityMs } from './cabf.js';
import type { CertificateFacts } from './facts.js';
import { postQuantumName, quantumClassOfKey, quantumClassOfSignature } from './pqc.js';
import { fail, leafOnly, pass, type GradingRule, type GradingRuleset, type Verdict } from './rules.js';

/**
 * The built-in rulesets (read-only, as the vendor's: its clients list and read rulesets, never write them).
 * Messages name the certificate's value and the reference the rule comes from.
 */

const RSA = /^rsa-(\d+)$/;
const EC = /^ec-(.+)$/;
/** Curves and their strength in bits of security × 2 (the field size). */
const EC_BITS: Record<string, number> = { secp256r1: 256, secp384r1: 384, secp521r1: 521, secp256k1: 256, brainpoolp256r1: 256, brainpoolp384r1: 384, brainpoolp512r1: 512 };
const WEBPKI_CURVES = new Set(['secp256r1', 'secp384r1', 'secp521r1']);

function keyStrength(f: CertificateFacts): Verdict {
  const k = f.keyType;
  const rsa = RSA.exec(k);
  if (rsa) {
    const bits = Number(rsa[1]);
    return bits >= 2048
      ? pass(`${k}: a ${bits}-bit RSA key meets the 2048-bit minimum`)
      : fail(`${k}: a ${bits}-bit RSA key is below the 2048-bit minimum (NIST SP 800-131A, CA/B Baseline Requirements §6.1.5); it can be factored`);
  }
  const ec = EC.exec(k);
  if (ec) {
    const bits = EC_BITS[ec[1]!];
    if (bits === undefined) return fail(`${k}: ${ec[1] === 'explicit' ? 'explicit curve parameters are refused (RFC 5480 §2.1.1)' : 'an unknown elliptic curve'}`);
    return bits >= 256 ? pass(`${k}: a ${bits}-bit curve meets the 256-bit minimum`) : fail(`${k}: a ${bits}-bit curve is below the 256-bit minimum`);
  }
  if (k === 'ed-25519' || k === 'ed-448') return pass(`${k}: an EdDSA key (RFC 8410) of adequate strength`);
  if (k.startsWith('dsa')) return fail(`${k}: DSA is no longer approved for signatures (FIPS 186-5)`);
  const pq = postQuantumName(k);
  if (pq) return pass(`${pq}: a post-quantum key of adequate strength`);
  return fail(`${k}: an unknown key algorithm, its strength cannot be assessed`);
}

function webPkiKey(f: CertificateFacts): Verdict {
  const k = f.keyType;
  if (RSA.test(k)) return pass(`${k}: RSA is allowed in publicly trusted TLS certificates`);
  const ec = EC.exec(k);
  if (ec && WEBPKI_CURVES.has(ec[1]!)) return pass(`${k}: ECDSA on ${ec[1]} is allowed in publicly trusted TLS certificates`);
  return fail(`${k}: publicly trusted TLS certificates take only RSA or ECDSA on P-256, P-384 or P-521 keys (CA/B Baseline Requirements §6.1.5); fine for a private PKI`);
}

/** Signature algorithms on a broken or too short hash, by the decoder's name or OID (those it does not name). */
const WEAK_SIGNATURES: Readonly<Record<string, string>> = {
  '1.2.840.113549.1.1.2': 'MD2',
  '1.2.840.113549.1.1.3': 'MD4',
  md5WithRSAEncryption: 'MD5',
  sha1WithRSAEncryption: 'SHA-1',
  'ecdsa-with-SHA1': 'SHA-1',
  '1.2.840.10040.4.3': 'SHA-1',
  sha224WithRSAEncryption: 'SHA-224',
  'ecdsa-with-SHA224': 'SHA-224',
};
const WHY: Readonly<Record<string, string>> = {
  MD2: 'MD2, broken',
  MD4: 'MD4, broken',
  MD5: 'MD5 (collisions forged in practice since 2008)',
  'SHA-1': 'SHA-1 (collisions forged in practice since 2017, SHAttered)',
  'SHA-224': 'SHA-224, below the SHA-256 minimum of the CA/B Baseline Requirements §7.1.3.2',
};

function signatureHash(f: CertificateFacts): Verdict {
  const s = f.signingAlgorithm;
  const weak = WEAK_SIGNATURES[s];
  if (weak) return fail(`${s}: signed with ${WHY[weak]}; a certificate with a forged signature is within reach`);
  return pass(`${s}: a collision-resistant signature algorithm`);
}

function cabfValidity(f: CertificateFacts): Verdict {
  const step = stepFor(f.notBefore);
  const ms = validityMs(f.notBefore, f.notAfter);
  const length = days(ms);
  const from = new Date(f.notBefore).toISOString().slice(0, 10);
  // Compared to the millisecond: a day plus one second is over (the message rounds to hundredths of a day).
  return ms <= step.maxDays * 86_400_000
    ? pass(`valid ${length} days from ${from}: within the ${step.maxDays}-day maximum of the CA/B schedule for ${stepText(step)}`)
    : fail(`valid ${length} days from ${from}: exceeds the ${step.maxDays}-day maximum of the CA/B schedule for ${stepText(step)} (Baseline Requirements §6.3.2, ballot SC-081)`);
}

function sanPresent(f: CertificateFacts): Verdict {
  if (f.sans.length === 0) return fail(`no subjectAltName: TLS clients match the host against the SANs only, the subject CN is ignored (RFC 6125 §6.4.4, CA/B Baseline Requirements §7.1.2.7.12)`);
  const shown = f.sans.slice(0, 3).map((s) => `${s.sanType}:${s.value}`).join(', ');
  return pass(`${f.sans.length} subjectAltName value${f.sans.length === 1 ? '' : 's'}: ${shown}${f.sans.length > 3 ? ', …' : ''}`);
}

function serverAuth(f: CertificateFacts): Verdict {
  if (f.eku === null) return fail('no extendedKeyUsage extension: a TLS server certificate must carry serverAuth (CA/B Baseline Requirements §7.1.2.7.10); without it the key may be used for any purpose');
  if (!f.eku.includes('serverAuth')) return fail(`extendedKeyUsage is ${f.eku.join(', ') || 'empty'}, without serverAuth: TLS clients refuse it for a server`);
  return pass(`extendedKeyUsage includes serverAuth (${f.eku.join(', ')})`);
}

function noAnyEku(f: CertificateFacts): Verdict {
  if (f.eku?.includes('anyExtendedKeyUsage') || f.eku?.includes('2.5.29.37.0')) return fail('extendedKeyUsage includes anyExtendedKeyUsage, forbidden in TLS server certificates (CA/B Baseline Requirements §7.1.2.7.10)');
  return pass('no anyExtendedKeyUsage');
}

function pqcKey(f: CertificateFacts): Verdict {
  const cls = quantumClassOfKey(f.keyType);
  if (cls === 'post-quantum') return pass(`${postQuantumName(f.keyType)}: a post-quantum key (FIPS 204/205), not broken by a quantum computer`);
  if (cls === 'hybrid') return pass(`${postQuantumName(f.keyType)}: a hybrid (composite) key, safe while either part holds`);
  if (f.altKeyType && quantumClassOfKey(f.altKeyType) === 'post-quantum') return pass(`${f.keyType} with an alternative ${postQuantumName(f.altKeyType)} key (subjectAltPublicKeyInfo): a hybrid certificate`);
  if (cls === 'quantum-vulnerable') return fail(`${f.keyType}: quantum-vulnerable, Shor's algorithm recovers the private key on a cryptographically relevant quantum computer; plan its replacement by ML-DSA (FIPS 204) or a hybrid key`);
  return fail(`${f.keyType}: an unknown key algorithm, its quantum resistance cannot be assessed`);
}

function pqcSignature(f: CertificateFacts): Verdict {
  const cls = quantumClassOfSignature(f.signingAlgorithm);
  if (cls === 'post-quantum' || cls === 'hybrid') return pass(`${f.signingAlgorithm}: the issuer signs with a ${cls} algorithm`);
  if (cls === 'quantum-vulnerable') return fail(`${f.signingAlgorithm}: the issuer's signature is quantum-vulnerable (a quantum computer could forge it); the chain needs a post-quantum or hybrid CA`);
  return fail(`${f.signingAlgorithm}: an unknown signature algorithm, its quantum resistance cannot be assessed`);
}

const rule = (r: GradingRule): GradingRule => r;
const list = (values: readonly string[]): string => `[${values.map((v) => JSON.stringify(v)).join(', ')}]`;
const STRONG_KEYS = ['ec-secp256r1', 'ec-secp384r1', 'ec-secp521r1', 'ec-secp256k1', 'ec-brainpoolp256r1', 'ec-brainpoolp384r1', 'ec-brainpoolp512r1', 'ed-25519', 'ed-448', 'ml-dsa-44', 'ml-dsa-65', 'ml-dsa-87'];

export const BUILTIN_RULESETS: readonly GradingRuleset[] = [
  {
    name: 'key-type-and-size',
    description: 'Public key algorithm and size: strong enough, and of a kind publicly trusted TLS accepts',
    rules: [
      rule({
        name: 'key-strength',
        condition: `keytype matches "^rsa-([2-9][0-9][0-9][0-9]|[1-9][0-9][0-9][0-9][0-9])$" or keytype in ${list(STRONG_KEYS)}`,
        conditionLanguage: 'HCQL',
        grade: 'F',
        score: 3,
        description: 'RSA keys of at least 2048 bits, elliptic curves of at least 256 bits, EdDSA or post-quantum keys',
        check: keyStrength,
      }),
      rule({
        name: 'webpki-key-algorithm',
        condition: 'keytype matches "^rsa-" or keytype in ["ec-secp256r1", "ec-secp384r1", "ec-secp521r1"]',
        conditionLanguage: 'HCQL',
        grade: 'B',
        score: 1,
        description: 'RSA or ECDSA on P-256, P-384 or P-521, the keys publicly trusted TLS certificates may carry',
        check: webPkiKey,
      }),
    ],
  },
  {
    name: 'signature-algorithm',
    description: "The issuer's signature: no MD2, MD4, MD5, SHA-1 or SHA-224",
    rules: [
      rule({
        name: 'collision-resistant-hash',
        condition: `signingalgorithm not in ${list(Object.keys(WEAK_SIGNATURES))}`,
        conditionLanguage: 'HCQL',
        grade: 'F',
        score: 3,
        description: 'Signed with SHA-256 or stronger (or a scheme of its own: EdDSA, ML-DSA)',
        check: signatureHash,
      }),
    ],
  },
  {
    name: 'cabf-validity',
    description: 'Validity length against the CA/B Forum schedule (398 → 200 → 100 → 47 days, by notBefore)',
    rules: [
      rule({
        name: 'cabf-max-validity',
        condition: 'notAfter − notBefore + 1 s ≤ 398 days (notBefore before 2026-03-15), 200 (before 2027-03-15), 100 (before 2029-03-15), else 47',
        conditionLanguage: 'text',
        grade: 'D',
        score: 2,
        description: 'Valid no longer than the CA/B Baseline Requirements §6.3.2 allow for its notBefore (end-entity certificates)',
        applies: leafOnly,
        check: cabfValidity,
      }),
    ],
  },
  {
    name: 'san-presence',
    description: 'Subject alternative names: the names TLS clients check',
    rules: [rule({ name: 'san-present', condition: 'san exists', conditionLanguage: 'HCQL', grade: 'D', score: 2, description: 'At least one subjectAltName value (end-entity certificates)', applies: leafOnly, check: sanPresent })],
  },
  {
    name: 'extended-key-usage',
    description: 'Extended key usage of a TLS server certificate',
    rules: [
      rule({ name: 'server-auth', condition: 'the extendedKeyUsage extension is present and includes serverAuth', conditionLanguage: 'text', grade: 'C', score: 2, description: 'serverAuth in extendedKeyUsage (end-entity certificates)', applies: leafOnly, check: serverAuth }),
      rule({ name: 'no-any-eku', condition: 'extendedKeyUsage does not include anyExtendedKeyUsage', conditionLanguage: 'text', grade: 'C', score: 1, description: 'No anyExtendedKeyUsage (end-entity certificates)', applies: leafOnly, check: noAnyEku }),
    ],
  },
  {
    name: 'pqc-readiness',
    description: 'Post-quantum readiness: quantum-vulnerable public-key algorithms (RSA, ECDSA, EdDSA, DSA) are flagged; ML-DSA, SLH-DSA and hybrid keys pass',
    rules: [
      rule({ name: 'pq-public-key', condition: 'the public key is ML-DSA or SLH-DSA, a composite ML-DSA key, or a classical key with an ML-DSA/SLH-DSA subjectAltPublicKeyInfo', conditionLanguage: 'text', grade: 'C', score: 2, description: 'The public key resists a quantum computer', check: pqcKey }),
      rule({ name: 'pq-signature', condition: 'the signature algorithm is ML-DSA, SLH-DSA or composite ML-DSA', conditionLanguage: 'text', grade: 'C', score: 1, description: 'The issuer signs with a post-quantum or hybrid algorithm', check: pqcSignature }),
    ],
  },
];

const BY_NAME = new Map(BUILTIN_RULESETS.map((r) => [r.name.toLowerCase(), r]));

/** A built-in ruleset by name (case-insensitive), or undefined. */
export const rulesetNamed = (name: string): GradingRuleset | undefined => BY_NAME.get(name.toLowerCase());
