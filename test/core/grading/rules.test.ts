/**
 * Grading without a database: the built-in rulesets and policies explained on certificates made by the openssl
 * CLI (RSA-1024, RSA-2048, P-256, Ed25519, a 400-day validity, no SAN, no serverAuth), the CA/B validity
 * schedule at each step, post-quantum readiness, and the HCQL conditions.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import t from 'tap';
import { CABF_SCHEDULE, stepFor } from '../../../core/grading/cabf.js';
import { explainPolicy, explainRuleset, type ExplainedPolicy, type ExplainedRule } from '../../../core/grading/explain.js';
import { factsOf, type CertificateFacts } from '../../../core/grading/facts.js';
import { DEFAULT_POLICY, PQC_POLICY, policyNamed } from '../../../core/grading/policies.js';
import { quantumClassOfKey, quantumClassOfSignature } from '../../../core/grading/pqc.js';
import { BUILTIN_RULESETS, rulesetNamed } from '../../../core/grading/rulesets.js';
import { CERTIFICATE_LANGUAGE } from '../../../core/inventory/language.js';
import { CertificateIssuer } from '../../../core/pki/issue/issuer.js';
import { selfSignedCertificate } from '../../../core/pki/issue/self-signed.js';
import { toPem } from '../../../core/pki/input.js';
import { parseCertificatePem } from '../../../core/pki/x509/parse.js';
import { parseQuery } from '../../../core/query/index.js';
import { openssl } from '../../helpers/openssl.js';
import { opensslCertificate } from './openssl-certs.js';

const ossl = openssl(t);
const policy = policyNamed(DEFAULT_POLICY)!;
const explain = (pem: string): ExplainedPolicy => explainPolicy(policy, factsOf(parseCertificatePem(pem)), pem);
const ruleOf = (e: ExplainedPolicy, name: string): ExplainedRule => e.explained.flatMap((r) => r.explained).find((r) => r.name === name)!;
const failed = (e: ExplainedPolicy): string[] => e.explained.flatMap((r) => r.explained.filter((x) => x.result === 'fail').map((x) => x.name));

t.test('openssl RSA-1024: F, the key-size rule says why', async (t) => {
  const e = explain(opensslCertificate(ossl, 'rsa1024', 'rsa:1024'));
  t.equal(e.grade, 'F');
  t.same(failed(e), ['key-strength']);
  const rule = ruleOf(e, 'key-strength');
  t.match(rule, { apply: true, eval: false, result: 'fail', grade: 'F', obtained: 0, score: 3 });
  t.equal(rule.message, 'rsa-1024: a 1024-bit RSA key is below the 2048-bit minimum (NIST SP 800-131A, CA/B Baseline Requirements §6.1.5); it can be factored');
  t.ok(e.score < 100 && e.score > 0, `score ${e.score}`);
  t.match(e.explained.find((r) => r.name === 'key-type-and-size'), { grade: 'F', max: 4, obtained: 1, score: 25 });
});

t.test('openssl RSA-2048 and P-256 (90 days, SAN, serverAuth): A, every rule passes with its reason', async (t) => {
  for (const [name, spec, keyType] of [['rsa2048', 'rsa:2048', 'rsa-2048'], ['p256', 'ec:P-256', 'ec-secp256r1']] as const) {
    const e = explain(opensslCertificate(ossl, name, spec));
    t.equal(e.grade, 'A', name);
    t.equal(e.score, 100, name);
    t.same(failed(e), [], name);
    t.ok(e.explained.every((rs) => rs.explained.every((r) => r.result === 'pass' && r.eval === true && r.message.length > 0)), `${name}: all pass`);
    t.match(ruleOf(e, 'key-strength').message, new RegExp(`^${keyType}: a (2048-bit RSA key|256-bit curve) meets`));
    t.match(ruleOf(e, 'collision-resistant-hash').message, /^(sha256WithRSAEncryption|ecdsa-with-SHA256): a collision-resistant/);
    t.match(ruleOf(e, 'cabf-max-validity').message, /^valid 90 days from \d{4}-\d\d-\d\d: within the 200-day maximum of the CA\/B schedule for notBefore on or after 2026-03-15$/);
    t.equal(ruleOf(e, 'san-present').message, `1 subjectAltName value: DNSNAME:${name}.example`);
    t.equal(ruleOf(e, 'server-auth').message, 'extendedKeyUsage includes serverAuth (serverAuth)');
  }
});

t.test('openssl Ed25519: B, strong but not a key publicly trusted TLS accepts', async (t) => {
  const e = explain(opensslCertificate(ossl, 'ed', 'ed25519'));
  t.equal(e.grade, 'B');
  t.same(failed(e), ['webpki-key-algorithm']);
  t.match(ruleOf(e, 'key-strength'), { result: 'pass', message: 'ed-25519: an EdDSA key (RFC 8410) of adequate strength' });
  t.match(ruleOf(e, 'webpki-key-algorithm'), { result: 'fail', grade: 'B', message: /^ed-25519: publicly trusted TLS certificates take only RSA or ECDSA on P-256, P-384 or P-521 keys/ });
  t.match(ruleOf(e, 'collision-resistant-hash'), { result: 'pass', message: /^ED25519:/ });
});

t.test('openssl 400-day validity: D against the CA/B schedule for its notBefore', async (t) => {
  const e = explain(opensslCertificate(ossl, 'long', 'ec:P-256', { days: 400 }));
  t.equal(e.grade, 'D');
  t.same(failed(e), ['cabf-max-validity']);
  const notBefore = new Date(parseCertificatePem(ossl.read('long.pem').toString()).notBefore);
  t.ok(notBefore.getTime() >= Date.UTC(2026, 2, 15), 'this test runs after 2026-03-15: the 200-day step governs');
  t.equal(
    ruleOf(e, 'cabf-max-validity').message,
    `valid 400 days from ${notBefore.toISOString().slice(0, 10)}: exceeds the 200-day maximum of the CA/B schedule for notBefore on or after 2026-03-15 (Baseline Requirements §6.3.2, ballot SC-081)`,
  );
});

t.test('openssl without SAN: D; without serverAuth: C', async (t) => {
  const noSan = explain(opensslCertificate(ossl, 'nosan', 'ec:P-256', { san: null }));
  t.equal(noSan.grade, 'D');
  t.same(failed(noSan), ['san-present']);
  t.match(ruleOf(noSan, 'san-present').message, /^no subjectAltName: TLS clients match the host against the SANs only/);
  const clientOnly = explain(opensslCertificate(ossl, 'client', 'ec:P-256', { eku: 'clientAuth' }));
  t.equal(clientOnly.grade, 'C');
  t.same(failed(clientOnly), ['server-auth']);
  t.equal(ruleOf(clientOnly, 'server-auth').message, 'extendedKeyUsage is clientAuth, without serverAuth: TLS clients refuse it for a server');
  const noEku = explain(opensslCertificate(ossl, 'noeku', 'ec:P-256', { eku: null }));
  t.equal(noEku.grade, 'C');
  t.match(ruleOf(noEku, 'server-auth').message, /^no extendedKeyUsage extension/);
  const any = explain(opensslCertificate(ossl, 'anyeku', 'ec:P-256', { eku: 'serverAuth, anyExtendedKeyUsage' }));
  t.same(failed(any), ['no-any-eku']);
});

t.test('several failures: the worst grade wins, every failure is explained', async (t) => {
  const e = explain(opensslCertificate(ossl, 'bad', 'rsa:1024', { days: 400, san: null, eku: null }));
  t.equal(e.grade, 'F');
  t.same(failed(e), ['key-strength', 'cabf-max-validity', 'san-present', 'server-auth']);
});

t.test('a CA certificate: the leaf rules do not apply, and say so', async (t) => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const pem = toPem(selfSignedCertificate(privateKey, { subject: 'CN=Root', notBefore: Date.UTC(2026, 5, 1), notAfter: Date.UTC(2036, 5, 1), basicConstraints: { ca: true } }));
  const e = explain(pem);
  t.equal(e.grade, 'A');
  t.match(ruleOf(e, 'cabf-max-validity'), { apply: false, eval: null, result: 'not-applicable', message: 'not applicable: a CA certificate: the rule is about end-entity certificates' });
  t.match(e.explained.find((r) => r.name === 'san-presence'), { apply: false, max: 0, score: 100 });
});

t.test('the CA/B schedule: 398 → 200 → 100 → 47 days by notBefore, both ends included', async (t) => {
  t.same(CABF_SCHEDULE.map((s) => s.maxDays), [398, 200, 100, 47]);
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const DAY = 86_400_000;
  const validity = rulesetNamed('cabf-validity')!;
  const verdict = (notBefore: number, lengthMs: number) => explainRuleset(validity, factsOf(parseCertificatePem(toPem(selfSignedCertificate(privateKey, { subject: 'CN=v', sans: [{ sanType: 'DNSNAME', value: 'v.example' }], basicConstraints: { ca: false }, notBefore, notAfter: notBefore + lengthMs }))))).explained[0]!;
  for (const [from, maxDays, label] of [
    [Date.UTC(2025, 5, 1), 398, 'notBefore before 2026-03-15'],
    [Date.UTC(2026, 2, 15), 200, 'notBefore on or after 2026-03-15'],
    [Date.UTC(2027, 5, 1), 100, 'notBefore on or after 2027-03-15'],
    [Date.UTC(2029, 2, 15), 47, 'notBefore on or after 2029-03-15'],
  ] as const) {
    t.equal(stepFor(from).maxDays, maxDays);
    // notAfter − notBefore + 1 s: a notAfter one second short of maxDays is exactly maxDays long.
    t.match(verdict(from, maxDays * DAY - 1000), { result: 'pass', message: new RegExp(`within the ${maxDays}-day maximum of the CA/B schedule for ${label}$`) }, `${maxDays} days`);
    t.match(verdict(from, maxDays * DAY), { result: 'fail', message: new RegExp(`exceeds the ${maxDays}-day maximum of the CA/B schedule for ${label}`) }, `${maxDays} days and a second`);
  }
  t.equal(stepFor(Date.UTC(2026, 2, 15) - 1).maxDays, 398, 'the day before a step still has the previous maximum');
});

t.test('PQC readiness: classical keys are quantum-vulnerable', async (t) => {
  const pqc = policyNamed(PQC_POLICY)!;
  for (const name of ['rsa2048', 'p256', 'ed']) {
    const pem = ossl.read(`${name}.pem`).toString();
    const e = explainPolicy(pqc, factsOf(parseCertificatePem(pem)), pem);
    t.equal(e.grade, 'C', name);
    const key = e.explained[0]!.explained.find((r) => r.name === 'pq-public-key')!;
    t.match(key, { result: 'fail', grade: 'C', message: /: quantum-vulnerable, Shor's algorithm recovers the private key .* ML-DSA \(FIPS 204\) or a hybrid key$/ }, name);
    t.match(e.explained[0]!.explained.find((r) => r.name === 'pq-signature'), { result: 'fail', message: /quantum-vulnerable/ });
  }
});

t.test('PQC readiness: ML-DSA, SLH-DSA, composite and alternative keys are recognised', async (t) => {
  // OpenSSL 3.0 here cannot make ML-DSA keys, and node 20 neither: this certificate is real DER, issued and
  // signed (ECDSA) by a real CA, but its ML-DSA-44 subject key is 1312 random bytes under the FIPS 204 OID —
  // enough to test recognition on the OID, not an ML-DSA key anyone holds.
  const mlDsaKey = randomBytes(1312);
  const der = Buffer.concat([
    Buffer.from([0x30, 0x82, 0x05, 0x32]), // SEQUENCE, 1330 bytes
    Buffer.from([0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11]), // AlgorithmIdentifier { id-ml-dsa-44 }
    Buffer.from([0x03, 0x82, 0x05, 0x21, 0x00]), // BIT STRING, 1313 bytes, no unused bits
    mlDsaKey,
  ]);
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const caDer = selfSignedCertificate(privateKey, { subject: 'CN=PQ test CA', basicConstraints: { ca: true } });
  const issued = new CertificateIssuer({ caCertificateDer: caDer, caKey: privateKey }).issueForKey(new Uint8Array(der), { subject: 'CN=pq.example', sans: [{ sanType: 'DNSNAME', value: 'pq.example' }], validityDays: 30, extendedKeyUsage: ['serverAuth'] });
  const pem = toPem(issued);
  const info = parseCertificatePem(pem);
  t.equal(info.keyType, 'ml-dsa-44');
  const e = explainPolicy(policyNamed(PQC_POLICY)!, factsOf(info), pem);
  const rules = e.explained[0]!.explained;
  t.match(rules.find((r) => r.name === 'pq-public-key'), { result: 'pass', message: 'ml-dsa-44: a post-quantum key (FIPS 204/205), not broken by a quantum computer' });
  t.match(rules.find((r) => r.name === 'pq-signature'), { result: 'fail', message: /^ecdsa-with-SHA256: the issuer's signature is quantum-vulnerable/ }, 'an ML-DSA key under an ECDSA CA: the chain is not ready yet');
  t.equal(e.grade, 'C');
  const general = explain(pem);
  t.match(ruleOf(general, 'key-strength'), { result: 'pass', message: 'ml-dsa-44: a post-quantum key of adequate strength' });
  t.match(ruleOf(general, 'webpki-key-algorithm'), { result: 'fail', grade: 'B' });

  t.equal(quantumClassOfKey('ml-dsa-87'), 'post-quantum');
  t.equal(quantumClassOfKey('2.16.840.1.101.3.4.3.20'), 'post-quantum', 'SLH-DSA by OID (keys.ts does not name it)');
  t.equal(quantumClassOfKey('1.3.6.1.5.5.7.6.37'), 'hybrid', 'composite ML-DSA (draft-ietf-lamps-pq-composite-sigs)');
  t.equal(quantumClassOfKey('rsa-4096'), 'quantum-vulnerable');
  t.equal(quantumClassOfKey('1.2.3.4'), 'unknown');
  t.equal(quantumClassOfSignature('ML-DSA-65'), 'post-quantum');
  t.equal(quantumClassOfSignature('sha256WithRSAEncryption'), 'quantum-vulnerable');
  // A classical certificate with an ML-DSA alternative key (subjectAltPublicKeyInfo): a hybrid.
  const hybrid: CertificateFacts = { ...factsOf(info), keyType: 'ec-secp256r1', altKeyType: 'ml-dsa-65' };
  const verdict = explainRuleset(rulesetNamed('pqc-readiness')!, hybrid).explained[0]!;
  t.match(verdict, { result: 'pass', message: 'ec-secp256r1 with an alternative ml-dsa-65 key (subjectAltPublicKeyInfo): a hybrid certificate' });
});

t.test('rules: HCQL conditions parse in the certificate query language; names are unique', async (t) => {
  const names = new Set<string>();
  for (const ruleset of BUILTIN_RULESETS) {
    for (const rule of ruleset.rules) {
      t.notOk(names.has(rule.name), `${rule.name} unique`);
      names.add(rule.name);
      if (rule.conditionLanguage === 'HCQL') t.doesNotThrow(() => parseQuery(rule.condition, CERTIFICATE_LANGUAGE), rule.name);
    }
  }
  t.ok(names.size >= 9);
});
