import t from 'tap';
import type { CertificateProfile, CsrFacts } from '../../../core/profiles/types.js';
import { normalizeProfile } from '../../../core/profiles/validate.js';
import { PROFILE_TRUST_MS } from '../../../core/profiles/repository.js';
import { bootProfiles, fakeConnector } from './fixture.js';

/** A profile as the API stores it (normalizeProfile fills the defaults the same way POST does). */
const profileOf = (body: object): CertificateProfile => normalizeProfile({ name: 'web', pkiConnector: 'ca', ...body });

const rich = profileOf({
  subject: [
    { element: 'cn.1', mandatory: true, regex: '[a-z0-9.-]+' },
    { element: 'ou.1', value: 'Ops' },
    { element: 'o.1', value: 'Acme', editable: false },
    { element: 'c.1', value: 'FR', editable: false },
  ],
  sans: [
    { type: 'DNSNAME', min: 1, max: 2, regex: '[a-z0-9.-]+\\.example' },
    { type: 'IPADDRESS', max: 1 },
    { type: 'URI', value: ['https://fixed.example/'], editable: false, max: 1 },
  ],
  labels: [
    { label: 'env', mandatory: true },
    { label: 'app', value: 'billing', editable: false },
    { label: 'cost' },
  ],
  owner: { mandatory: true },
  team: { value: 'pki', editable: false },
  contactEmail: { value: 'pki@example.com' },
});

/** What the caller parsed from a decentralized CSR. */
const csrOf = (over: Partial<CsrFacts> = {}): CsrFacts => ({
  subject: 'CN=from-csr.example,OU=Csr Unit,O=Other,C=DE',
  sans: [
    { sanType: 'DNSNAME', value: 'csr.example' },
    { sanType: 'RFC822NAME', value: 'dropped@example.com' },
  ],
  keyType: 'ec-secp256r1',
  ...over,
});

const code = (fn: () => unknown): { error: string; message: string; detail?: string } => {
  try {
    fn();
  } catch (err) {
    const e = err as { code?: string; message: string; detail?: string };
    return { error: e.code ?? 'none', message: e.message, detail: e.detail };
  }
  return { error: 'no error', message: '' };
};

t.test('templateOf: the enroll template clients index (client-compat §2.3, §10)', async (t) => {
  const { profiles } = await bootProfiles(t);
  const template = profiles.templateOf(rich, 'enroll');
  t.same(template.subject, [
    { element: 'cn.1', type: 'CN', value: '', mandatory: true, editable: true, regex: '[a-z0-9.-]+' },
    { element: 'ou.1', type: 'OU', value: 'Ops', mandatory: false, editable: true },
    { element: 'o.1', type: 'O', value: 'Acme', mandatory: false, editable: false },
    { element: 'c.1', type: 'C', value: 'FR', mandatory: false, editable: false },
  ]);
  t.same(template.sans, [
    { type: 'DNSNAME', value: [], editable: true, min: 1, max: 2, regex: '[a-z0-9.-]+\\.example' },
    { type: 'IPADDRESS', value: [], editable: true, min: 0, max: 1 },
    { type: 'URI', value: ['https://fixed.example/'], editable: false, min: 0, max: 1 },
  ]);
  t.same(template.labels, [
    { label: 'env', value: null, mandatory: true, editable: true },
    { label: 'app', value: 'billing', mandatory: false, editable: false },
    { label: 'cost', value: null, mandatory: false, editable: true },
  ]);
  t.same(template.owner, { value: null, editable: true, mandatory: true });
  t.same(template.team, { value: 'pki', editable: false, mandatory: false });
  t.same(template.contactEmail, { value: 'pki@example.com', editable: true, mandatory: false });
  t.equal(template.keyType, 'ec-secp256r1');
  const capabilities = template.capabilities as Record<string, unknown>;
  t.equal(capabilities['centralized'], true, 'capabilities.centralized is indexable');
  t.equal(capabilities['decentralized'], true);
  t.same(capabilities, {
    centralized: true,
    decentralized: true,
    preferredEnrollmentMode: 'decentralized',
    defaultKeyType: 'ec-secp256r1',
    authorizedKeyTypes: ['ec-secp256r1', 'ec-secp384r1', 'rsa-2048', 'rsa-3072', 'rsa-4096', 'ed-25519'],
    escrow: false,
    p12passwordMode: 'generated',
    p12PasswordMode: 'generated',
    showP12OnEnroll: true,
    showP12PasswordOnEnroll: true,
  });
  t.notOk('passwordPolicy' in template, 'no passwordPolicy unless the requester chooses the password');
  t.notOk('status' in template);

  const manual = profileOf({ keyPolicy: { p12passwordMode: 'manual', passwordPolicy: 'Strong' } });
  t.same(profiles.templateOf(manual, 'enroll').passwordPolicy, { name: 'Strong' });
  t.same((profiles.templateOf(manual, 'renew').capabilities as Record<string, unknown>)['p12PasswordMode'], 'manual');

  // Submitted values and a CSR (the template probe {template: {csr}}) fill in editable elements only.
  const filled = profiles.templateOf(
    rich,
    'enroll',
    { subject: [{ element: 'ou.1', value: 'Sent' }, { element: 'o.1', value: 'Ignored' }], labels: [{ label: 'env', value: 'prod' }], keyType: 'rsa-3072', csr: '-----BEGIN CERTIFICATE REQUEST-----' },
    csrOf(),
  );
  t.same(
    (filled.subject as { element: string; value: string }[]).map((e) => `${e.element}=${e.value}`),
    ['cn.1=from-csr.example', 'ou.1=Sent', 'o.1=Acme', 'c.1=FR'],
  );
  t.same((filled.sans as { value: string[] }[])[0]!.value, ['csr.example']);
  t.equal((filled.labels as { value: string | null }[])[0]!.value, 'prod');
  t.equal(filled.keyType, 'ec-secp256r1', 'the CSR decides the key type');
  t.equal(filled.csr, '-----BEGIN CERTIFICATE REQUEST-----');
  t.equal(profiles.templateOf(rich, 'enroll', { keyType: 'rsa-3072' }).keyType, 'rsa-3072');
  t.equal(profiles.templateOf(rich, 'enroll', { keyType: 'dsa-1024' }).keyType, 'ec-secp256r1', 'an unauthorized key type is not echoed');

  // Other workflows: their subset.
  t.same(Object.keys(profiles.templateOf(rich, 'renew')).sort(), ['capabilities', 'keyType']);
  t.same(profiles.templateOf(rich, 'revoke', { revocationReason: 'keycompromise' }), { revocationReason: 'keycompromise' });
  t.same(Object.keys(profiles.templateOf(rich, 'update')).sort(), ['contactEmail', 'labels', 'owner', 'team']);
  t.same(profiles.templateOf(rich, 'recover'), {});
});

t.test('resolve: the happy paths', async (t) => {
  const { profiles } = await bootProfiles(t);
  const centralized = profiles.resolve(rich, 'enroll', {
    subject: [{ element: 'cn.1', value: 'www.example' }, { element: 'o.1', value: 'Not editable' }],
    sans: [{ type: 'DNSNAME', value: ['www.example', 'api.example', 'www.example'] }, { type: 'ipaddress', value: ['192.0.2.1'] }],
    labels: [{ label: 'env', value: 'prod' }, { label: 'app', value: 'ignored' }, { label: 'cost', value: null }],
    owner: { value: 'alice' },
    team: { value: 'other' },
    contactEmail: null,
    metadata: [{ metadata: 'ticket', value: 'T-1' }, { metadata: 'pki_connector', value: 'forged' }],
    keyType: null,
    csr: null,
    registrationDate: 0,
  });
  t.same(centralized, {
    subject: 'CN=www.example,OU=Ops,O=Acme,C=FR',
    sans: [
      { sanType: 'DNSNAME', value: 'www.example' },
      { sanType: 'DNSNAME', value: 'api.example' },
      { sanType: 'IPADDRESS', value: '192.0.2.1' },
      { sanType: 'URI', value: 'https://fixed.example/' },
    ],
    labels: [
      { key: 'env', value: 'prod' },
      { key: 'app', value: 'billing' },
    ],
    metadata: [{ key: 'ticket', value: 'T-1' }],
    owner: 'alice',
    team: 'pki',
    keyType: 'ec-secp256r1',
    mode: 'centralized',
    validityDays: 365,
    keyUsage: ['digitalSignature'],
    extendedKeyUsage: ['serverAuth', 'clientAuth'],
  });
  t.notOk('contactEmail' in centralized, 'contactEmail: null clears the default');

  const rsa = profiles.resolve(rich, 'enroll', { subject: [{ element: 'CN', value: 'a.example' }], sans: [{ type: 'DNSNAME', value: ['a.example'] }], labels: [{ label: 'env', value: 'x' }], owner: 'bob', keyType: 'rsa-2048' });
  t.same(rsa.keyUsage, ['digitalSignature', 'keyEncipherment'], 'keyEncipherment kept for RSA');
  t.equal(rsa.owner, 'bob', 'owner as a bare string');
  t.equal(rsa.contactEmail, 'pki@example.com', 'the default contact');

  // Decentralized: the CSR fills what the template leaves out; its O/C and its e-mail SAN are not issued.
  const decentralized = profiles.resolve(rich, 'enroll', { labels: [{ label: 'env', value: 'dev' }], owner: { value: 'carol' }, keyType: 'rsa-4096' }, csrOf());
  t.equal(decentralized.subject, 'CN=from-csr.example,OU=Csr Unit,O=Acme,C=FR');
  t.same(decentralized.sans, [
    { sanType: 'DNSNAME', value: 'csr.example' },
    { sanType: 'URI', value: 'https://fixed.example/' },
  ]);
  t.equal(decentralized.keyType, 'ec-secp256r1', 'the CSR decides the key type');
  const copied = profiles.resolve(rich, 'enroll', { subject: [{ element: 'cn.1', value: '' }], sans: [{ type: 'DNSNAME', value: [] }], labels: [{ label: 'env', value: 'dev' }], owner: 'carol' }, csrOf());
  t.equal(copied.subject, decentralized.subject, 'elements sent empty take the CSR values');
  t.same(copied.sans, decentralized.sans, 'a SAN type sent empty takes the CSR values');
  t.equal(decentralized.mode, 'decentralized');

  // The pre-2.4 SAN shape, dnElements given by the caller, escaping in the subject.
  const old = profiles.resolve(
    rich,
    'enroll',
    { sans: [{ element: 'dnsname.1', value: 'one.example' }, { element: 'dnsname.2', value: 'two.example' }], labels: [{ label: 'env', value: 'x' }], owner: { value: 'o' } },
    csrOf({ dnElements: [{ element: 'cn.1', type: 'CN', value: 'elements.example' }], sans: [] }),
  );
  t.match(old.subject, /^CN=elements\.example,/, "the caller's dnElements win over parsing the subject");
  t.same(old.sans.filter((s) => s.sanType === 'DNSNAME').map((s) => s.value), ['one.example', 'two.example']);

  const escaped = profiles.resolve(profileOf({ subject: [{ element: 'cn.1' }, { element: 'o.1' }], sans: [] }), 'enroll', { subject: [{ element: 'cn.1', value: 'a,b' }, { element: 'o.1', value: 'x+y' }] });
  t.equal(escaped.subject, 'CN=a\\,b,O=x\\+y');

  // update: only labels and ownership are resolved.
  const update = profiles.resolve(rich, 'update', { labels: [{ label: 'env', value: 'prod' }], owner: { value: 'dave' } });
  t.same([update.subject, update.sans, update.owner, update.labels], ['', [], 'dave', [{ key: 'env', value: 'prod' }, { key: 'app', value: 'billing' }]]);
});

t.test('resolve: each template violation is its own 400', async (t) => {
  const { profiles } = await bootProfiles(t);
  const good = { subject: [{ element: 'cn.1', value: 'www.example' }], sans: [{ type: 'DNSNAME', value: ['www.example'] }], labels: [{ label: 'env', value: 'prod' }], owner: { value: 'alice' } };
  const cases: [string, Record<string, unknown>, CsrFacts | undefined, string, RegExp, CertificateProfile?][] = [
    ['mandatory subject element missing', { ...good, subject: [] }, undefined, 'PRF-010', /subject element cn\.1 is mandatory/],
    ['mandatory subject element empty', { ...good, subject: [{ element: 'cn.1', value: '' }] }, undefined, 'PRF-010', /cn\.1/],
    ['subject regex', { ...good, subject: [{ element: 'cn.1', value: 'WWW' }] }, undefined, 'PRF-011', /cn\.1: "WWW" does not match/],
    ['subject element not in the profile', { ...good, subject: [{ element: 'cn.1', value: 'a' }, { element: 'l.1', value: 'Paris' }] }, undefined, 'PRF-017', /Subject element l\.1 is not authorized/],
    ['unknown subject attribute', { ...good, subject: [{ element: 'colour.1', value: 'red' }] }, undefined, 'PRF-017', /colour/],
    ['too few SANs', { ...good, sans: [] }, undefined, 'PRF-012', /DNSNAME: 0 value\(s\), the profile allows 1 to 2/],
    ['too many SANs', { ...good, sans: [{ type: 'DNSNAME', value: ['a.example', 'b.example', 'c.example'] }] }, undefined, 'PRF-012', /3 value/],
    ['SAN regex', { ...good, sans: [{ type: 'DNSNAME', value: ['www.other.org'] }] }, undefined, 'PRF-011', /www\.other\.org/],
    ['not an IP address', { ...good, sans: [...good.sans, { type: 'IPADDRESS', value: ['999.1.1.1'] }] }, undefined, 'PRF-011', /999\.1\.1\.1/],
    ['SAN type not in the profile', { ...good, sans: [...good.sans, { type: 'RFC822NAME', value: ['a@example.com'] }] }, undefined, 'PRF-017', /SAN type RFC822NAME is not authorized/],
    ['label not in the profile', { ...good, labels: [{ label: 'env', value: 'p' }, { label: 'secret', value: 'x' }] }, undefined, 'PRF-013', /Label element secret is not authorized/],
    ['mandatory label', { ...good, labels: [] }, undefined, 'PRF-010', /label env is mandatory/],
    ['mandatory owner', { ...good, owner: { value: null } }, undefined, 'PRF-010', /owner is mandatory/],
    ['contact e-mail', { ...good, contactEmail: { value: 'not-an-address' } }, undefined, 'PRF-011', /contactEmail/],
    ['key type not authorized', { ...good, keyType: 'ec-secp521r1' }, undefined, 'PRF-014', /ec-secp521r1 is not authorized/],
    ['unknown algorithm', { ...good, keyType: 'rsa-1024' }, undefined, 'PRF-015', /Unknown algorithm rsa-1024/],
    ['unknown algorithm from the CSR', good, csrOf({ keyType: 'dsa-2048' }), 'PRF-015', /Unknown algorithm dsa-2048/],
    ['CSR key type not authorized', good, csrOf({ keyType: 'ec-secp521r1' }), 'PRF-014', /ec-secp521r1/],
    ['decentralized not allowed', good, csrOf(), 'PRF-016', /decentralized/, profileOf({ ...rich, keyPolicy: { decentralized: false, preferredEnrollmentMode: 'centralized' } })],
    ['centralized not allowed', good, undefined, 'PRF-016', /does not allow centralized/, profileOf({ ...rich, keyPolicy: { centralized: false } })],
    ['subject not an array', { ...good, subject: 'CN=x' }, undefined, 'PRF-018', /template\.subject must be an array/],
    ['SAN entry without type', { ...good, sans: [{ value: ['x'] }] }, undefined, 'PRF-018', /has no type/],
  ];
  for (const [what, submitted, csr, expected, detail, profile] of cases) {
    const got = code(() => profiles.resolve(profile ?? rich, 'enroll', submitted, csr));
    t.equal(got.error, expected, `${what}: ${got.detail ?? got.message}`);
    t.match(`${got.message} ${got.detail ?? ''}`, detail, what);
  }
  t.match(code(() => profiles.resolve(rich, 'enroll', { ...good, labels: [{ label: 'env', value: 'p' }, { label: 'secret', value: 'x' }] })).message, /^Label element secret is not authorized$/, 'the message clients assert');
  t.match(code(() => profiles.resolve(rich, 'enroll', { ...good, keyType: 'rsa-1024' })).message, /Unknown algorithm/);
  // Renew checks the key too; import does not.
  t.equal(code(() => profiles.resolve(rich, 'renew', good, csrOf({ keyType: 'ec-secp521r1' }))).error, 'PRF-014');
  t.equal(profiles.resolve(rich, 'import', good, csrOf({ keyType: 'ec-secp521r1' })).keyType, 'ec-secp521r1');
});

t.test('require / get / list, and ensureDefault twice and concurrently', async (t) => {
  const { kernel, profiles } = await bootProfiles(t);
  await fakeConnector(kernel, 'local');
  await profiles.ensureDefault('default', 'default', 'local');
  await profiles.ensureDefault('default', 'default', 'other-connector');
  const stored = await profiles.require('default', 'default');
  t.equal(stored.pkiConnector, 'local', 'the second call leaves the first profile alone');
  t.equal(stored.module, 'webra');
  t.same(stored.keyPolicy.authorizedKeyTypes, ['ec-secp256r1', 'ec-secp384r1', 'rsa-2048', 'rsa-3072', 'rsa-4096', 'ed-25519']);

  await Promise.all(Array.from({ length: 8 }, () => profiles.ensureDefault('default', 'raced', 'local')));
  t.same((await profiles.list('default')).map((p) => p.name), ['default', 'raced']);
  const created = (await kernel.db.knex('events').where({ code: 'PROFILE-CREATED' }).orderBy('seq').select('object_id', 'principal')) as { object_id: string; principal: string | null }[];
  t.same(created, [
    { object_id: 'default', principal: null },
    { object_id: 'raced', principal: null },
  ], 'one creation event each, by nobody (first start)');

  t.equal(await profiles.get('default', 'missing'), null);
  await t.rejects(profiles.require('default', 'missing'), { code: 'PRF-003', message: 'Profile does not exist or is disabled' });
  await kernel.db.knex('certificate_profiles').where({ name: 'raced' }).update({ enabled: false });
  await t.rejects(profiles.require('default', 'raced'), { code: 'PRF-003', message: 'Profile does not exist or is disabled' }, 'a disabled profile is refused');
  t.equal((await profiles.get('default', 'raced'))?.enabled, false, 'get still answers it');
});

t.test('the request workflows see a profile change made here at once, one made by another node within PROFILE_TRUST_MS', async (t) => {
  const { kernel, profiles } = await bootProfiles(t);
  await fakeConnector(kernel, 'local');
  await profiles.ensureDefault('default', 'trusted', 'local');
  t.equal((await profiles.require('default', 'trusted')).enabled, true);
  const current = (await profiles.repository.get('default', 'trusted')).profile;
  await profiles.repository.update('default', { ...current, enabled: false }, null);
  await t.rejects(profiles.require('default', 'trusted'), { code: 'PRF-003' }, 'disabled through this node: refused at once');
  await profiles.repository.update('default', { ...current, enabled: true }, null);
  t.equal((await profiles.require('default', 'trusted')).enabled, true, 'enabled again through this node: accepted at once');
  await profiles.repository.remove('default', 'trusted', null);
  t.equal(await profiles.get('default', 'trusted'), null, 'deleted through this node: gone at once');

  // Another node's change (a write this node's repository did not make): read again once the copy is older.
  await profiles.ensureDefault('default', 'elsewhere', 'local');
  t.equal((await profiles.require('default', 'elsewhere')).enabled, true);
  await kernel.db.knex('certificate_profiles').where({ tenant: 'default', name: 'elsewhere' }).update({ enabled: false });
  await new Promise((r) => setTimeout(r, PROFILE_TRUST_MS + 100));
  await t.rejects(profiles.require('default', 'elsewhere'), { code: 'PRF-003' }, 'disabled elsewhere: refused after PROFILE_TRUST_MS');
});
