import { randomBytes, X509Certificate } from 'node:crypto';
import { PermanentError, type IssueOutcome, type IssueRequest } from '@certwright/sdk';
import t, { type Test } from 'tap';
import { localCaKernel, serialOf, workbench } from './helpers.js';

const requestId = (): string => randomBytes(12).toString('hex');
const DAY = 86_400_000;

function issuedPem(t: Test, outcome: IssueOutcome): string {
  if (outcome.status !== 'issued') {
    t.fail(`expected issued, got ${JSON.stringify(outcome)}`);
    throw new Error('not issued');
  }
  return outcome.certificatePem;
}

t.test('local-ca', async (t) => {
  const { kernel, make } = await localCaKernel(t);
  const bench = workbench(t);

  t.test('the kernel loads connectors/local-ca and registers the pki connector type', async (t) => {
    const record = kernel.plugins.records.find((r) => r.id === 'local-ca');
    t.equal(record?.state, 'active', record?.reason ?? '');
    t.equal(record?.source, 'built-in');
    t.equal(record?.manifest?.kind, 'pki-connector');
    t.equal(kernel.provided.pkiConnectors.pluginOf('local-ca'), 'local-ca');
  });

  const ca = await make('ca-p256');

  // X509Certificate.subject lists RDNs in DER order: RFC 4514 text names them last first.
  t.test('first use creates a P-256 root and an issuing CA (pathlen 0, keyCertSign + cRLSign), named after the instance', async (t) => {
    const connection = await ca.testConnection();
    t.equal(connection.ok, true, connection.detail ?? '');
    const chain = await ca.getCaChain();
    t.equal(chain.length, 2);
    const [issuing, root] = chain.map((p) => new X509Certificate(p)) as [X509Certificate, X509Certificate];
    t.equal(root.subject, 'O=Certwright\nCN=Certwright Local Root CA ca-p256');
    t.equal(root.issuer, root.subject);
    t.equal(issuing.subject, 'O=Certwright\nCN=Certwright Local Issuing CA ca-p256');
    t.equal(issuing.issuer, root.subject);
    t.equal(root.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    t.equal(issuing.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    t.ok(issuing.verify(root.publicKey));
    const text = bench.text(chain[0]!);
    t.match(text, /X509v3 Basic Constraints: critical\n\s*CA:TRUE, pathlen:0/);
    t.match(text, /X509v3 Key Usage: critical\n\s*Certificate Sign, CRL Sign\n/);
    t.match(bench.text(chain[1]!), /X509v3 Basic Constraints: critical\n\s*CA:TRUE\n/);
    // Validity: root 3650 days, issuing 1825 days (defaults).
    t.equal(Math.round((Date.parse(root.validTo) - Date.parse(root.validFrom)) / DAY), 3650);
    t.equal(Math.round((Date.parse(issuing.validTo) - Date.parse(issuing.validFrom)) / DAY), 1825);
    t.same(await (await make('ca-p256')).getCaChain(), chain, 'a new connector object of the same instance opens the same CA');
  });

  t.test('the private keys are sealed at rest', async (t) => {
    const rows = (await kernel.db.knex('plugin_kv').where({ plugin_id: 'local-ca' }).select('key', 'value')) as { key: string; value: string }[];
    const row = rows.find((r) => r.key === 'ca:ca-p256');
    t.ok(row, 'stored under ca:<instance>');
    t.notMatch(row!.value, /PRIVATE KEY/);
    const stored = JSON.parse(row!.value) as { root: { sealedKey: string }; issuing: { sealedKey: string } };
    t.type(stored.issuing.sealedKey, 'string');
    t.not(stored.root.sealedKey, stored.issuing.sealedKey);
  });

  t.test('issues from a CSR with the profile subject, SANs, validity, usages and publication URLs; openssl verifies the chain', async (t) => {
    const csrPem = bench.csr('/CN=ignored.example', { sans: 'DNS:ignored.example' });
    const request: IssueRequest = {
      requestId: requestId(),
      csrPem,
      profile: 'default',
      subject: 'CN=www.example.com,O=Example',
      sans: [
        { type: 'DNSNAME', value: 'www.example.com' },
        { type: 'DNSNAME', value: 'example.com' },
        { type: 'IPADDRESS', value: '192.0.2.7' },
      ],
      validityDays: 90,
      keyUsage: ['digitalSignature'],
      extendedKeyUsage: ['serverAuth', 'clientAuth'],
      publication: { crlUrl: 'http://pki.example/pki/ca-p256/crl', ocspUrl: 'http://pki.example/pki/ca-p256/ocsp', caIssuersUrl: 'http://pki.example/pki/ca-p256/ca' },
    };
    const before = Date.now();
    const outcome = await ca.issue(request);
    const pem = issuedPem(t, outcome);
    t.same((outcome as { chainPem: string[] }).chainPem, await ca.getCaChain());
    t.match(bench.verifyChain(pem, await ca.getCaChain(), ['-purpose', 'sslserver']), /: OK\n/);
    const cert = new X509Certificate(pem);
    t.equal(cert.subject, 'O=Example\nCN=www.example.com');
    t.equal(cert.subjectAltName, 'DNS:www.example.com, DNS:example.com, IP Address:192.0.2.7');
    t.ok(Math.abs(Date.parse(cert.validTo) - (before + 90 * DAY)) < 5000, 'valid 90 days');
    const text = bench.text(pem);
    t.match(text, /X509v3 Key Usage: critical\n\s*Digital Signature\n/);
    t.match(text, /X509v3 Extended Key Usage: \n\s*TLS Web Server Authentication, TLS Web Client Authentication/);
    t.match(text, /X509v3 CRL Distribution Points: \n\s*Full Name:\n\s*URI:http:\/\/pki\.example\/pki\/ca-p256\/crl/);
    t.match(text, /OCSP - URI:http:\/\/pki\.example\/pki\/ca-p256\/ocsp\n\s*CA Issuers - URI:http:\/\/pki\.example\/pki\/ca-p256\/ca/);
    t.match(serialOf(bench, pem), /^[0-7][0-9a-f]{31}$/, '128-bit random serial (16 bytes, positive)');
  });

  t.test('without subject or SANs the CSR decides; the default key usage is the toolkit one', async (t) => {
    const pem = issuedPem(t, await ca.issue({ requestId: requestId(), csrPem: bench.csr('/CN=csr.example/O=From CSR', { sans: 'DNS:csr.example,email:a@csr.example' }), profile: 'default' }));
    const cert = new X509Certificate(pem);
    t.equal(cert.subject, 'CN=csr.example\nO=From CSR', 'the CSR subject, byte for byte (openssl -subj order)');
    t.equal(cert.subjectAltName, 'DNS:csr.example, email:a@csr.example');
    t.match(bench.text(pem), /X509v3 Key Usage: critical\n\s*Digital Signature\n/);
    t.notMatch(bench.text(pem), /Extended Key Usage|CRL Distribution/);
    t.match(bench.verifyChain(pem, await ca.getCaChain()), /: OK\n/);
  });

  t.test('idempotent by request id: a retry answers the certificate issued first', async (t) => {
    const request = { requestId: requestId(), csrPem: bench.csr('/CN=retry.example'), profile: 'default' };
    const first = issuedPem(t, await ca.issue(request));
    const again = issuedPem(t, await ca.issue(request));
    t.equal(again, first);
    const other = issuedPem(t, await ca.issue({ ...request, requestId: requestId() }));
    t.not(serialOf(bench, other), serialOf(bench, first), 'another request, another serial');
    // Concurrent retries too.
    const racing = { requestId: requestId(), csrPem: request.csrPem, profile: 'default' };
    const answers = await Promise.all([ca.issue(racing), ca.issue(racing), ca.issue(racing)]);
    t.equal(new Set(answers.map((a) => issuedPem(t, a))).size, 1);
    // The record behind it expires after 30 days (kv ttlMs), so it does not stay for ever, one per certificate.
    const record = (await kernel.db.knex('plugin_kv').where({ plugin_id: 'local-ca', key: `issued:ca-p256:${request.requestId}` }).first('value', 'expires_at')) as { value: string; expires_at: number | string | null };
    t.equal(JSON.parse(record.value), first, 'the record holds the certificate answered');
    t.ok(Math.abs(Number(record.expires_at) - (Date.now() + 30 * DAY)) < 120_000, `it expires in 30 days (${String(record.expires_at)})`);
  });

  t.test('a CSR that is not one, or whose signature is wrong, is rejected', async (t) => {
    const broken = await ca.issue({ requestId: requestId(), csrPem: '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n', profile: 'default' });
    t.equal(broken.status, 'rejected');
    const csr = bench.csr('/CN=tampered.example');
    const der = Buffer.from(csr.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    der[der.length - 5]! ^= 0xff; // inside the signature
    const tampered = await ca.issue({ requestId: requestId(), csrPem: `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`, profile: 'default' });
    t.match(tampered, { status: 'rejected', reason: /not signed by the key it carries|signature/ });
    const badEku = await ca.issue({ requestId: requestId(), csrPem: csr, profile: 'default', extendedKeyUsage: ['noSuchUsage'] });
    t.match(badEku, { status: 'rejected', reason: /noSuchUsage/ });
  });

  t.test('revoke accepts its own certificates and refuses others; poll never answers pending', async (t) => {
    const mine = issuedPem(t, await ca.issue({ requestId: requestId(), csrPem: bench.csr('/CN=revoke.example'), profile: 'default' }));
    await t.resolves(ca.revoke({ certificatePem: mine, serial: serialOf(bench, mine), reason: 'keyCompromise' }));
    const other = await make('ca-other');
    const foreign = issuedPem(t, await other.issue({ requestId: requestId(), csrPem: bench.csr('/CN=foreign.example'), profile: 'default' }));
    await t.rejects(ca.revoke({ certificatePem: foreign, serial: serialOf(bench, foreign), reason: 'keyCompromise' }), PermanentError);
    await t.rejects(ca.revoke({ certificatePem: (await ca.getCaChain())[1]!, serial: '01', reason: 'superseded' }), PermanentError, 'not even its own root');
    await t.rejects(ca.poll('anything'), PermanentError);
  });

  for (const [keyType, check] of [
    ['rsa-2048', (c: X509Certificate) => c.publicKey.asymmetricKeyType === 'rsa' && c.publicKey.asymmetricKeyDetails?.modulusLength === 2048],
    ['ed-25519', (c: X509Certificate) => c.publicKey.asymmetricKeyType === 'ed25519'],
    ['ec-secp384r1', (c: X509Certificate) => c.publicKey.asymmetricKeyDetails?.namedCurve === 'secp384r1'],
  ] as const) {
    t.test(`keyType ${keyType}: CA keys of that type, leaves verify`, async (t) => {
      const typed = await make(`ca-${keyType}`, { keyType, rootSubject: `CN=Root ${keyType},O=Test`, issuingValidityDays: 400 });
      const chain = await typed.getCaChain();
      const [issuing, root] = chain.map((p) => new X509Certificate(p)) as [X509Certificate, X509Certificate];
      t.ok(check(root), 'root key');
      t.ok(check(issuing), 'issuing key');
      t.equal(root.subject, `O=Test\nCN=Root ${keyType}`);
      t.equal(Math.round((Date.parse(issuing.validTo) - Date.parse(issuing.validFrom)) / DAY), 400);
      for (const alg of ['ec:P-256', 'rsa:2048', 'ed25519']) {
        const pem = issuedPem(t, await typed.issue({ requestId: requestId(), csrPem: bench.csr('/CN=typed.example', { alg }), profile: 'default', sans: [{ type: 'DNSNAME', value: 'typed.example' }] }));
        t.match(bench.verifyChain(pem, chain), /: OK\n/, `${alg} leaf`);
      }
    });
  }

  t.test('a validity beyond the issuing CA stops at the issuing CA', async (t) => {
    const short = await make('ca-short', { rootValidityDays: 30, issuingValidityDays: 60 });
    const [issuing, root] = (await short.getCaChain()).map((p) => new X509Certificate(p)) as [X509Certificate, X509Certificate];
    t.equal(issuing.validTo, root.validTo, 'the issuing CA stops at the root');
    const pem = issuedPem(t, await short.issue({ requestId: requestId(), csrPem: bench.csr('/CN=long.example'), profile: 'default', validityDays: 365 }));
    t.equal(new X509Certificate(pem).validTo, issuing.validTo);
  });

  t.test('two connectors racing to create one instance keep one CA', async (t) => {
    const name = `ca-race-${randomBytes(3).toString('hex')}`;
    const [a, b, c] = await Promise.all([make(name), make(name), make(name)]);
    const chains = await Promise.all([a!.getCaChain(), b!.getCaChain(), c!.getCaChain()]);
    t.same(chains[1], chains[0]);
    t.same(chains[2], chains[0]);
    // Every one of them signs with the stored key: each leaf verifies against the one chain.
    for (const connector of [a!, b!, c!]) {
      const pem = issuedPem(t, await connector.issue({ requestId: requestId(), csrPem: bench.csr('/CN=race.example'), profile: 'default' }));
      t.match(bench.verifyChain(pem, chains[0]!), /: OK\n/);
    }
  });

  t.test('a bad configuration is refused by the factory', async (t) => {
    await t.rejects(make('ca-bad', { keyType: 'dsa-1024' }), { name: 'ConfigurationError' });
  });
});
