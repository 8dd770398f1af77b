import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { decodeCrl } from '../../../core/pki/crl/decode.js';
import { CrlEntryIndex, normaliseSerial } from '../../../core/pki/crl/entry-index.js';
import { verifyCrl } from '../../../core/pki/crl/verify.js';
import { ProblemError } from '../../../core/errors/index.js';
import { onelineToRfc4514, OPENSSL_REASONS, opensslCrlEntries, opensslDate, rareTools, type RareTools } from '../../helpers/openssl-rare.js';

/** `openssl crl -noout -<flag>` lines as {name: value}. */
function crlFields(tools: RareTools, file: string): Record<string, string> {
  const out: Record<string, string> = {};
  const text = tools.run(['crl', '-in', file, '-noout', '-nextupdate', '-lastupdate', '-hash', '-issuer', '-crlnumber', '-fingerprint', '-sha256']);
  for (const line of text.split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) out[line.slice(0, at)] = line.slice(at + 1).trim();
  }
  // `-hash` prints "issuer name hash=…".
  out.hash = out['issuer name hash'] ?? '';
  return out;
}

/** The value lines under an extension header of `openssl crl -text`. */
function extensionBlock(text: string, header: string): string[] {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.trim().startsWith(header));
  if (at < 0) return [];
  const indent = lines[at]!.search(/\S/);
  const out: string[] = [];
  for (const line of lines.slice(at + 1)) {
    if (line.trim() === '') continue;
    if (line.search(/\S/) <= indent) break;
    out.push(line.trim());
  }
  return out;
}

function problemCode(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (err instanceof ProblemError) return err.code;
    throw err;
  }
  return 'none';
}

t.test('a CRL from openssl ca with every reason: every field as openssl prints it', async (t) => {
  const tools = rareTools(t);
  tools.ca({
    crlExtensions: ['issuingDistributionPoint = critical, @idp', '[ idp ]', 'fullname = URI:http://crl.example/ca.crl', 'onlyuser = TRUE', 'onlysomereasons = keyCompromise, CACompromise'],
  });
  const reasons = ['unspecified', 'keyCompromise', 'CACompromise', 'affiliationChanged', 'superseded', 'cessationOfOperation', 'certificateHold', 'removeFromCRL'];
  for (const [i, reason] of reasons.entries()) tools.revoke(tools.issue(`r${i}`), { reason });
  tools.revoke(tools.issue('compromised'), { compromise: '20240102030405Z' });
  tools.revoke(tools.issue('plain'));
  tools.issue('good');
  tools.gencrl();
  const der = tools.der('crl.pem', 'crl');
  const crl = decodeCrl(der);
  const text = tools.run(['crl', '-in', 'crl.pem', '-noout', '-text']);
  const fields = crlFields(tools, 'crl.pem');

  t.equal(crl.version, 2);
  t.equal(crl.issuer, onelineToRfc4514(fields.issuer!));
  t.equal(crl.issuer, 'CN=Rare Test CA,O=Certwright Test,C=FR');
  t.same(
    crl.issuerElements.map((e) => e.element),
    ['c.1', 'o.1', 'cn.1'],
  );
  t.equal(crl.issuerHash, fields.hash, 'openssl crl -hash');
  t.equal(crl.thisUpdate, opensslDate(fields.lastUpdate!));
  t.equal(crl.nextUpdate, opensslDate(fields.nextUpdate!));
  t.equal(crl.crlNumber, BigInt(fields.crlNumber!).toString(), 'crlNumber (openssl prints 0x01)');
  t.equal(crl.deltaCrlIndicator, undefined);
  t.equal(crl.signingAlgorithm, /Signature Algorithm: (\S+)/.exec(text)![1]);
  t.equal(crl.thumbprints.sha256, fields['SHA2-256 Fingerprint']!.replace(/:/g, '').toLowerCase());
  t.equal(crl.authorityKeyIdentifier?.keyIdentifier, extensionBlock(text, 'X509v3 Authority Key Identifier')[0]!.replace(/:/g, '').toLowerCase());
  t.same(crl.issuingDistributionPoint, {
    fullName: ['http://crl.example/ca.crl'],
    onlyContainsUserCerts: true,
    onlyContainsCACerts: false,
    onlySomeReasons: ['KEYCOMPROMISE', 'CACOMPROMISE'],
    indirectCrl: false,
    onlyContainsAttributeCerts: false,
  });
  t.match(text, /URI:http:\/\/crl\.example\/ca\.crl/);
  t.match(text, /Only User Certificates/);
  t.match(text, /Key Compromise, CA Compromise/);
  t.same(
    crl.extensions,
    [
      { oid: '2.5.29.35', critical: false },
      { oid: '2.5.29.28', critical: true },
      { oid: '2.5.29.20', critical: false },
    ],
    'CRL extensions in order, with criticality',
  );

  const expected = opensslCrlEntries(text);
  t.equal(expected.length, reasons.length + 2);
  t.equal(crl.entries.length, expected.length, 'one entry per revoked certificate');
  for (const [i, want] of expected.entries()) {
    const got = crl.entries[i]!;
    t.equal(got.serial, want.serial, `entry ${i} serial`);
    t.equal(got.revocationDate, want.revocationDate, `entry ${want.serial} revocation date`);
    t.equal(got.reason, want.reason === undefined ? undefined : OPENSSL_REASONS[want.reason], `entry ${want.serial} reason (${want.reason})`);
    t.equal(got.invalidityDate, want.invalidityDate, `entry ${want.serial} invalidity date`);
  }
  t.same(
    crl.entries.map((e) => e.reason),
    ['UNSPECIFIED', 'KEYCOMPROMISE', 'CACOMPROMISE', 'AFFILIATIONCHANGED', 'SUPERSEDED', 'CESSATIONOFOPERATION', 'CERTIFICATEHOLD', 'REMOVEFROMCRL', 'KEYCOMPROMISE', undefined],
  );
  t.equal(crl.entries[8]!.invalidityDate, Date.UTC(2024, 0, 2, 3, 4, 5));

  // The signature, with the CA's key and with others.
  const caKey = createPublicKey(tools.text('ca.pem'));
  t.equal(verifyCrl(der, caKey), true, 'signed by the CA');
  t.equal(verifyCrl(der, generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey), false, 'another RSA key');
  t.equal(verifyCrl(der, generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey), false, 'a key of another type');
  const tampered = Uint8Array.from(der);
  const serialAt = Buffer.from(tampered).indexOf(Buffer.from([0x02, 0x02, 0x10, 0x00]));
  tampered[serialAt + 3] = 0x99;
  t.equal(decodeCrl(tampered).entries[0]!.serial, '1099', 'a tampered CRL still decodes');
  t.equal(verifyCrl(tampered, caKey), false, 'but does not verify');

  // The entry index for the CRL cache: any common serial spelling.
  const index = CrlEntryIndex.of(crl);
  t.equal(index.size, crl.entries.length);
  t.equal(index.get('1001')?.reason, 'KEYCOMPROMISE');
  t.equal(index.get('10:01')?.reason, 'KEYCOMPROMISE');
  t.equal(index.get('0x1002')?.reason, 'CACOMPROMISE');
  t.equal(index.get('001003')?.reason, 'AFFILIATIONCHANGED');
  t.equal(index.has('100a'), false, 'the good certificate (serial 100a) is not listed');
  t.equal(normaliseSerial('0A:1B'), '0a1b');
  t.equal(normaliseSerial('a1b'), '0a1b');
  t.equal(normaliseSerial('0'), '00');
});

t.test('signature algorithms (RSA-PSS, ECDSA, Ed25519), version 1 CRLs, delta CRLs', async (t) => {
  const cases = [
    { name: 'rsa-pss', ca: { keySpec: ['rsa:2048'] }, gencrl: ['-sigopt', 'rsa_padding_mode:pss', '-sigopt', 'rsa_pss_saltlen:32'] },
    { name: 'ecdsa p-384', ca: { keySpec: ['ec', '-pkeyopt', 'ec_paramgen_curve:P-384'] }, gencrl: [] },
    { name: 'ed25519', ca: { keySpec: ['ed25519'] }, gencrl: ['-md', 'default'] },
    { name: 'version 1', ca: { v1Crl: true }, gencrl: [] },
    { name: 'delta', ca: { crlExtensions: ['2.5.29.27 = critical, ASN1:INTEGER:5'] }, gencrl: [] },
  ];
  for (const c of cases) {
    const tools = rareTools(t);
    tools.ca(c.ca);
    tools.revoke(tools.issue('a'), { reason: 'superseded' });
    tools.gencrl('crl.pem', c.gencrl);
    const der = tools.der('crl.pem', 'crl');
    const crl = decodeCrl(der);
    const text = tools.run(['crl', '-in', 'crl.pem', '-noout', '-text']);
    t.equal(crl.signingAlgorithm, /Signature Algorithm: (\S+)/.exec(text)![1], `${c.name}: algorithm`);
    t.equal(crl.version, Number(/Version (\d)/.exec(text)![1]), `${c.name}: version`);
    t.equal(crl.issuerHash, crlFields(tools, 'crl.pem').hash, `${c.name}: hash`);
    t.same(
      crl.entries.map((e) => [e.serial, e.revocationDate, e.reason]),
      opensslCrlEntries(text).map((e) => [e.serial, e.revocationDate, e.reason && OPENSSL_REASONS[e.reason]]),
      `${c.name}: entries`,
    );
    t.equal(verifyCrl(der, createPublicKey(tools.text('ca.pem'))), true, `${c.name}: signature verifies`);
    if (c.name === 'version 1') {
      t.equal(crl.crlNumber, null);
      t.same(crl.extensions, []);
      t.equal(crl.authorityKeyIdentifier, undefined);
    }
    if (c.name === 'delta') {
      t.match(text, /Delta CRL Indicator: critical\s+5/);
      t.equal(crl.deltaCrlIndicator, '5');
    }
  }
});

t.test('the issuer hash follows OpenSSL canonical names: case, spaces, multi-valued RDNs, non-ASCII', async (t) => {
  for (const subject of ['/C=FR/O=  Certwright   TEST  /OU=Ünïcode Team+CN=Mixed   Case CA/emailAddress=Admin@Example.COM', '/DC=org/DC=Example/CN=a\tb', '/CN=x/serialNumber=0042']) {
    const tools = rareTools(t);
    tools.ca({ subject });
    tools.gencrl();
    const crl = decodeCrl(tools.der('crl.pem', 'crl'));
    t.equal(crl.issuerHash, crlFields(tools, 'crl.pem').hash, subject);
    t.equal(crl.issuerHash, tools.run(['x509', '-in', 'ca.pem', '-noout', '-subject_hash']).trim(), `${subject}: as the CA's subject hash`);
  }
});

t.test('100 000 entries: decoded fast, every serial found through the index', async (t) => {
  const tools = rareTools(t);
  tools.ca();
  // An index.txt written directly: openssl ca -gencrl lists every R line.
  const lines: string[] = [];
  for (let i = 0; i < 100_000; i++) lines.push(`R\t300101000000Z\t240102030405Z,${i % 2 ? 'keyCompromise' : 'superseded'}\t${(0x100000 + i).toString(16).toUpperCase()}\tunknown\t/CN=n${i}`);
  tools.write('index.txt', `${lines.join('\n')}\n`);
  tools.gencrl();
  const der = tools.der('crl.pem', 'crl');
  const started = performance.now();
  const crl = decodeCrl(der);
  const elapsed = performance.now() - started;
  t.equal(crl.entries.length, 100_000);
  t.ok(elapsed < 2000, `decoded in ${elapsed.toFixed(0)} ms`);
  const text = tools.run(['crl', '-in', 'crl.pem', '-noout', '-text']);
  const expected = opensslCrlEntries(text);
  t.equal(expected.length, 100_000, 'openssl lists as many');
  let mismatches = 0;
  for (let i = 0; i < expected.length; i += 997) {
    const got = crl.entries[i]!;
    const want = expected[i]!;
    if (got.serial !== want.serial || got.revocationDate !== want.revocationDate || got.reason !== OPENSSL_REASONS[want.reason!]) mismatches++;
  }
  t.equal(mismatches, 0, 'sampled entries equal openssl');
  const index = CrlEntryIndex.of(crl);
  const lookups = performance.now();
  let found = 0;
  for (let i = 0; i < 100_000; i++) if (index.has((0x100000 + i).toString(16))) found++;
  t.equal(found, 100_000);
  t.ok(performance.now() - lookups < 1000, 'index lookups are cheap');
  t.equal(verifyCrl(der, createPublicKey(tools.text('ca.pem'))), true);
});

t.test('bad input: a specific PKI code, quickly', async (t) => {
  const tools = rareTools(t);
  tools.ca();
  tools.revoke(tools.issue('a'), { reason: 'superseded' });
  tools.gencrl();
  const der = tools.der('crl.pem', 'crl');
  const certificate = tools.der('ca.pem', 'x509');

  const deep = (levels: number): Uint8Array => {
    let inner: Uint8Array = Uint8Array.of(0x05, 0x00);
    for (let i = 0; i < levels; i++) {
      const len = inner.length;
      const header = len < 0x80 ? [0x30, len] : len < 0x100 ? [0x30, 0x81, len] : len < 0x10000 ? [0x30, 0x82, len >> 8, len & 0xff] : [0x30, 0x83, len >> 16, (len >> 8) & 0xff, len & 0xff];
      const next = new Uint8Array(header.length + len);
      next.set(header);
      next.set(inner, header.length);
      inner = next;
    }
    return inner;
  };
  const cases: [string, Uint8Array, string][] = [
    ['truncated', der.subarray(0, der.length - 10), 'PKI-001'],
    ['garbage', Uint8Array.from({ length: 300 }, (_, i) => (i * 37 + 11) & 0xff), 'PKI-001'],
    ['trailing bytes', Uint8Array.from([...der, 0, 0]), 'PKI-001'],
    ['a certificate', certificate, 'PKI-002'],
    ['absurd length', Uint8Array.of(0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x30, 0x00), 'PKI-004'],
    ['deep nesting', deep(5000), 'PKI-005'],
    ['empty', new Uint8Array(0), 'PKI-001'],
  ];
  for (const [name, bytes, code] of cases) {
    const started = performance.now();
    t.equal(problemCode(() => decodeCrl(bytes)), code, name);
    t.ok(performance.now() - started < 500, `${name}: in bounded time`);
  }
  t.equal(problemCode(() => verifyCrl(certificate, createPublicKey(tools.text('ca.pem')))), 'PKI-002', 'verifyCrl of a certificate');

  // An algorithm node cannot run: decoded by OID, verification refused with PKI-006.
  const unknown = Buffer.from(der);
  const oid = Buffer.from('06092a864886f70d01010b', 'hex');
  for (let at = unknown.indexOf(oid); at >= 0; at = unknown.indexOf(oid, at + 1)) unknown[at + oid.length - 1] = 0x7f;
  t.equal(decodeCrl(unknown).signingAlgorithm, '1.2.840.113549.1.1.127');
  t.equal(problemCode(() => verifyCrl(unknown, createPublicKey(tools.text('ca.pem')))), 'PKI-006');
});

t.test('mutated CRLs: a decoded CRL or a ProblemError, nothing else', async (t) => {
  const fc = await import('fast-check');
  const tools = rareTools(t);
  tools.ca({ crlExtensions: ['issuingDistributionPoint = critical, @idp', '[ idp ]', 'fullname = URI:http://crl.example/ca.crl', 'onlysomereasons = keyCompromise'] });
  tools.revoke(tools.issue('a'), { compromise: '20240102030405Z' });
  tools.gencrl();
  const der = tools.der('crl.pem', 'crl');
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(der.length - 1), fc.nat(255)), { minLength: 1, maxLength: 4 }), fc.nat(der.length), (edits, cut) => {
      const bytes = Uint8Array.from(der.subarray(0, Math.max(cut, der.length - 40)));
      for (const [at, value] of edits) if (at < bytes.length) bytes[at] = value;
      try {
        decodeCrl(bytes);
      } catch (err) {
        if (!(err instanceof ProblemError)) throw err;
      }
    }),
    { numRuns: 2000, seed: 5280 },
  );
  t.pass('2000 mutations');
});
