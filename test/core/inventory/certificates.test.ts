import t from 'tap';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { caller, createPrincipal } from '../../helpers/security.js';
import { eventCodes, makeFixtures, rowCounts } from './fixtures.js';

const CERTS = '/api/v1/certificates';
const LABELS = '/api/v1/certificate/labels/';
const HEX24 = /^[0-9a-f]{24}$/;

/** The keys the v2 SDK requires on every certificate (client-compat §3). */
const REQUIRED = ['_id', 'certificate', 'dn', 'escrowed', 'issuer', 'keyType', 'metadata', 'module', 'notAfter', 'notBefore', 'publicKeyThumbprint', 'revoked', 'selfSigned', 'serial', 'signingAlgorithm', 'subjectAlternateNames', 'thumbprint'];

t.test('import, then get by _id, by URL-encoded PEM and by find: the certificate object of client-compat §3', async (t) => {
  const kernel = await bootKernel(t);
  const f = makeFixtures(t);
  const admin = caller(kernel, ADMIN_HEADERS);

  const imported = await admin('POST', `${CERTS}/`, {
    certificate: f.rsa.pem,
    profile: 'webservers',
    owner: 'alice',
    team: 'pki',
    contactEmail: 'pki@example.com',
    metadata: [{ key: 'source', value: 'import' }],
    holderId: 'holder-1',
    someFieldTheServerDoesNotKnow: { nested: true },
    labels: null,
  });
  t.equal(imported.statusCode, 201, imported.body);
  t.equal(imported.headers['content-type'], 'application/json');
  const cert = imported.json() as Record<string, unknown>;
  t.match(cert, {
    _id: HEX24,
    module: 'webra',
    profile: 'webservers',
    owner: 'alice',
    team: 'pki',
    contactEmail: 'pki@example.com',
    holderId: 'holder-1',
    thumbprint: f.rsa.sha1,
    serial: f.rsa.serial,
    notBefore: f.rsa.notBefore,
    notAfter: f.rsa.notAfter,
    dn: 'CN=www.example.com,O=Certwright,C=FR',
    issuer: 'CN=www.example.com,O=Certwright,C=FR',
    selfSigned: true,
    revoked: false,
    escrowed: false,
    keyType: 'rsa-2048',
    labels: [],
    metadata: [{ key: 'source', value: 'import' }],
    status: 'valid',
  });
  t.same(cert.subjectAlternateNames, [
    { sanType: 'DNSNAME', value: 'www.Example.com' },
    { sanType: 'DNSNAME', value: 'api.example.com' },
    { sanType: 'IPADDRESS', value: '192.0.2.1' },
    { sanType: 'IPADDRESS', value: '2001:db8::1' },
    { sanType: 'RFC822NAME', value: 'ops@example.com' },
    { sanType: 'URI', value: 'https://example.com/app' },
  ], 'every SAN, in certificate order, value as in the certificate');
  t.notOk('someFieldTheServerDoesNotKnow' in cert, 'unknown fields are ignored');
  t.notOk('revocationDate' in cert, 'optional scalars without a value are absent, not null');

  const byId = await admin('GET', `${CERTS}/${cert._id as string}`);
  t.equal(byId.statusCode, 200, byId.body);
  t.equal(byId.headers['content-type'], 'application/json');
  const wrapped = byId.json() as { certificate: Record<string, unknown>; permissions: Record<string, boolean> };
  for (const key of REQUIRED) t.ok(key in wrapped.certificate, `GET by _id carries ${key}`);
  for (const key of ['notBefore', 'notAfter']) t.type(wrapped.certificate[key], 'number', `${key} is a number`);
  for (const key of ['selfSigned', 'revoked', 'escrowed', 'autoRenew', 'crlSynchronized']) t.type(wrapped.certificate[key], 'boolean', `${key} is a boolean`);
  for (const key of ['subjectAlternateNames', 'labels', 'metadata']) t.ok(Array.isArray(wrapped.certificate[key]), `${key} is an array`);
  t.same(wrapped.certificate, cert, 'GET answers what the import answered');
  t.same(wrapped.permissions, {
    revoke: true,
    requestRevoke: true,
    update: true,
    requestUpdate: true,
    recover: true,
    requestRecover: true,
    enroll: true,
    requestEnroll: true,
    migrate: true,
    requestMigrate: true,
  }, 'the administrator may do everything on the profile');
  t.equal((await admin('GET', `${CERTS}/${(cert._id as string).toUpperCase()}`)).statusCode, 200, 'the _id is case-insensitive');

  const byPem = await admin('GET', `${CERTS}/${encodeURIComponent(f.rsa.pem)}`);
  t.equal(byPem.statusCode, 200, byPem.body);
  t.same(byPem.json(), cert, 'GET by URL-encoded PEM: the bare object');
  const rawSlashes = await admin('GET', `${CERTS}/${f.rsa.pem.replace(/\n/g, '%0A').replace(/ /g, '%20').replace(/\+/g, '%2B')}`);
  t.equal(rawSlashes.statusCode, 200, 'a PEM whose slashes were left raw is found too');
  t.same(rawSlashes.json(), cert);

  const found = await admin('POST', `${CERTS}/find`, { certificate: f.rsa.pem });
  t.equal(found.statusCode, 200, found.body);
  const withPermissions = (await admin('GET', `${CERTS}/${cert._id}`)).json();
  t.same(found.json(), withPermissions, 'find answers {certificate, permissions}, as GET by _id (v2 CertificateWithPermissionsResponse)');
  t.same((await admin('POST', `${CERTS}/find`, { pem: f.rsa.pem })).json(), withPermissions, 'find also takes {pem}');
  t.same((await admin('POST', `${CERTS}/find`, { id: (cert._id as string).toUpperCase() })).json(), withPermissions, 'and {id} (v2 FindCertificateById)');

  // v2 CertificateList: POST /api/v1/certificates with a JSON array of _ids.
  const listed = await admin('POST', `${CERTS}`, [cert._id, 'ffffffffffffffffffffffff', 'not-an-id', cert._id]);
  t.equal(listed.statusCode, 200, listed.body.slice(0, 200));
  t.same(listed.json(), [withPermissions], 'the known ones, once, as {certificate, permissions}; unknown ids left out');
  t.equal((await admin('POST', `${CERTS}`, Array.from({ length: 1001 }, () => cert._id))).statusCode, 400, 'at most 1,000 ids');

  // EC leaf without a profile: module discovery, not self-signed, no rights on workflows.
  const leaf = await admin('POST', `${CERTS}/`, { certificate: f.ecLeaf.pem });
  t.equal(leaf.statusCode, 201, leaf.body);
  t.match(leaf.json(), { module: 'discovery', selfSigned: false, keyType: 'ec-secp256r1', issuer: 'CN=Inventory Test CA,O=Certwright', subjectAlternateNames: [{ sanType: 'DNSNAME', value: 'leaf.example.com' }] });
  t.notOk('profile' in leaf.json());
  const leafGet = (await admin('GET', `${CERTS}/${leaf.json()._id as string}`)).json() as { permissions: Record<string, boolean> };
  t.ok(Object.values(leafGet.permissions).every((v) => v === false), 'no profile: every permission false');

  t.same(await eventCodes(kernel), ['CERTIFICATE-IMPORTED', 'CERTIFICATE-IMPORTED']);
  const event = await kernel.db.knex('events').where({ code: 'CERTIFICATE-IMPORTED' }).orderBy('seq').first();
  t.match(event, { module: 'inventory', principal: 'administrator', object_type: 'certificate', object_id: cert._id });
  t.same(JSON.parse(event.payload), { thumbprint: f.rsa.sha1, dn: cert.dn, profile: 'webservers' });

  // What the database holds: side rows and search keys.
  const sans = (await kernel.db.knex('inv_certificate_sans').where({ certificate_id: cert._id }).orderBy('position').select('value', 'value_lc', 'value_rev')) as Record<string, string>[];
  t.same(sans[0], { value: 'www.Example.com', value_lc: 'www.example.com', value_rev: 'moc.elpmaxe.www' });
  const main = await kernel.db.knex('inv_certificates').where({ id: cert._id }).first();
  t.equal(main.tenant, 'default');
  t.match(main.dn_key, /^[0-9a-f]{64}$/);
});

t.test('duplicates, garbage and non-certificates are refused and nothing is written', async (t) => {
  const kernel = await bootKernel(t);
  const f = makeFixtures(t);
  const admin = caller(kernel, ADMIN_HEADERS);
  const first = await admin('POST', `${CERTS}/`, { certificate: f.ecCa.pem });
  t.equal(first.statusCode, 201);
  const id = first.json()._id as string;
  const before = await rowCounts(kernel);
  const events = (await eventCodes(kernel)).length;

  const duplicate = await admin('POST', `${CERTS}/`, { certificate: f.ecCa.pem, profile: 'other' });
  t.equal(duplicate.statusCode, 400);
  t.equal(duplicate.headers['content-type'], 'application/problem+json');
  t.match(duplicate.json(), { error: 'CRT-004', status: 400 });
  t.match(duplicate.json().detail, id, 'the detail names the existing _id');

  const cases: [string, unknown, number, string, RegExp?][] = [
    ['garbage PEM', { certificate: '-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n' }, 400, 'PKI-001', /Could not parse provided PEM/],
    ['random text', { certificate: 'hello' }, 400, 'PKI-001', /Could not parse provided PEM/],
    ['truncated certificate', { certificate: f.rsa.pem.slice(0, 300) + '\n-----END CERTIFICATE-----\n' }, 400, 'PKI-001'],
    ['a CSR', { certificate: f.csr }, 400, 'CRT-002'],
    ['no certificate', { profile: 'x' }, 400, 'HTTP-003'],
    ['empty certificate', { certificate: '' }, 400, 'HTTP-003'],
    ['labels not a list', { certificate: f.rsa.pem, labels: 'x' }, 400, 'HTTP-003'],
    ['profile with a colon', { certificate: f.rsa.pem, profile: 'a:b' }, 400, 'HTTP-003'],
    ['malformed JSON', '{"certificate": ', 400, 'HTTP-002'],
    ['a JSON array', [f.rsa.pem], 400, 'HTTP-003'],
  ];
  for (const [name, payload, status, code, message] of cases) {
    const res = await admin('POST', `${CERTS}/`, payload);
    t.equal(res.statusCode, status, `${name}: ${res.body}`);
    t.equal(res.headers['content-type'], 'application/problem+json', name);
    t.equal(res.json().error, code, name);
    if (message) t.match(res.json().message, message, name);
  }

  const wrongType = await kernel.app.inject({ method: 'POST', url: `${CERTS}/`, headers: { host: 'localhost', ...ADMIN_HEADERS, 'content-type': 'text/plain' }, payload: f.rsa.pem });
  t.equal(wrongType.statusCode, 415);
  t.equal(wrongType.json().error, 'HTTP-004');
  const oversized = await admin('POST', `${CERTS}/`, { certificate: f.rsa.pem, metadata: [{ key: 'padding', value: 'x'.repeat(300 * 1024) }] });
  t.equal(oversized.statusCode, 413);
  t.equal(oversized.headers['content-type'], 'application/problem+json');
  t.equal(oversized.json().error, 'HTTP-005');
  const longMetadata = await admin('POST', `${CERTS}/`, { certificate: f.rsa.pem, metadata: [{ key: 'k', value: 'x'.repeat(449) }] });
  t.equal(longMetadata.statusCode, 400);
  t.equal(longMetadata.json().error, 'CRT-002');
  const repeated = await admin('POST', `${CERTS}/`, { certificate: f.rsa.pem, metadata: [{ key: 'k', value: '1' }, { key: 'k', value: '2' }] });
  t.equal(repeated.json().error, 'CRT-002');

  t.same(await rowCounts(kernel), before, 'no row written in any inventory table');
  t.equal((await eventCodes(kernel)).length, events, 'no event written');

  // Reads of what is not there, or cannot be.
  const unknown = await admin('GET', `${CERTS}/0123456789abcdef01234567`);
  t.equal(unknown.statusCode, 404);
  t.equal(unknown.json().error, 'CRT-003');
  t.equal((await admin('GET', `${CERTS}/not-an-id`)).json().error, 'CRT-003');
  const absentPem = await admin('GET', `${CERTS}/${encodeURIComponent(f.rsa.pem)}`);
  t.equal(absentPem.statusCode, 404);
  t.equal(absentPem.json().error, 'CRT-003');
  const garbagePem = await admin('GET', `${CERTS}/${encodeURIComponent('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----')}`);
  t.equal(garbagePem.statusCode, 400);
  t.equal(garbagePem.json().error, 'PKI-001');
  t.equal((await admin('POST', `${CERTS}/find`, { certificate: f.rsa.pem })).json().error, 'CRT-003');
  t.equal((await admin('POST', `${CERTS}/find`, {})).json().error, 'PKI-001');
  t.equal((await admin('POST', `${CERTS}/find`, { id: 'ffffffffffffffffffffffff' })).json().error, 'CRT-003', 'an unknown id');
  t.equal((await admin('POST', `${CERTS}/find`, { certificate: 'junk' })).json().error, 'PKI-001');
});

t.test('labels on import: only defined labels, values matching their regex', async (t) => {
  const kernel = await bootKernel(t);
  const f = makeFixtures(t);
  const admin = caller(kernel, ADMIN_HEADERS);
  t.equal((await admin('POST', LABELS, { name: 'env', regex: 'prod|staging' })).statusCode, 201);
  t.equal((await admin('POST', LABELS, { name: 'app' })).statusCode, 201);
  const before = await rowCounts(kernel);

  const unknown = await admin('POST', `${CERTS}/`, { certificate: f.rsa.pem, labels: [{ key: 'colour', value: 'red' }] });
  t.equal(unknown.statusCode, 400);
  t.equal(unknown.json().error, 'LBL-006');
  t.match(unknown.json().message, /^Label element colour is not authorized/);

  const mismatch = await admin('POST', `${CERTS}/`, { certificate: f.rsa.pem, labels: [{ key: 'env', value: 'production' }] });
  t.equal(mismatch.statusCode, 400);
  t.equal(mismatch.json().error, 'LBL-006');
  t.match(mismatch.json().message, /Label element env is not authorized.*production/, 'names the key and the value');
  const partial = await admin('POST', `${CERTS}/`, { certificate: f.rsa.pem, labels: [{ key: 'env', value: 'prod-1' }] });
  t.equal(partial.json().error, 'LBL-006', 'the regex must match the whole value');
  t.same(await rowCounts(kernel), before, 'nothing written');

  const ok = await admin('POST', `${CERTS}/`, { certificate: f.rsa.pem, labels: [{ key: 'env', value: 'prod' }, { key: 'app', value: 'anything goes' }] });
  t.equal(ok.statusCode, 201, ok.body);
  t.same(ok.json().labels, [{ key: 'app', value: 'anything goes' }, { key: 'env', value: 'prod' }]);
  t.same((await admin('GET', `${CERTS}/${ok.json()._id as string}`)).json().certificate.labels, ok.json().labels);

  // A label carried by a certificate cannot be deleted; a changed regex applies to the next import at once.
  const inUse = await admin('DELETE', `${LABELS}env`);
  t.equal(inUse.statusCode, 400);
  t.equal(inUse.json().error, 'LBL-005');
  t.equal((await admin('PUT', LABELS, { name: 'app', regex: '[a-z]+' })).statusCode, 200);
  const now = await admin('POST', `${CERTS}/`, { certificate: f.ecCa.pem, labels: [{ key: 'app', value: 'anything goes' }] });
  t.equal(now.json().error, 'LBL-006', 'the label cache was dropped by the update');
  t.equal((await admin('DELETE', `${LABELS}app`)).statusCode, 400, 'app is carried by the first certificate');
});

t.test('certificate routes: credentials, permissions and hosts', async (t) => {
  const kernel = await bootKernel(t, {
    certwright: { endpoints: [{ host: 'ra.example', webra: true }, { host: 'admin.example', configuration: true }, { host: 'localhost', webra: true, configuration: true }] as never },
  });
  const f = makeFixtures(t);
  const admin = caller(kernel, ADMIN_HEADERS);
  const id = (await admin('POST', `${CERTS}/`, { certificate: f.rsa.pem, profile: 'web' })).json()._id as string;
  const anonymous = caller(kernel, {});
  const nobody = caller(kernel, (await createPrincipal(kernel, 'nobody')).headers);
  const searcher = caller(kernel, (await createPrincipal(kernel, 'searcher', { permissions: [{ value: 'search:certificates' }, { value: 'lifecycle:webra:web:revoke:request' }] })).headers);
  const importer = caller(kernel, (await createPrincipal(kernel, 'importer', { permissions: [{ value: 'lifecycle:webra:web:import:direct' }, { value: 'lifecycle:discovery:none:import:direct' }] })).headers);

  for (const [method, url, body] of [
    ['GET', `${CERTS}/${id}`, undefined],
    ['GET', `${CERTS}/${encodeURIComponent(f.rsa.pem)}`, undefined],
    ['POST', `${CERTS}/find`, { certificate: f.rsa.pem }],
    ['POST', `${CERTS}/`, { certificate: f.ecCa.pem }],
  ] as const) {
    const res = await anonymous(method, url, body);
    t.equal(res.statusCode, 401, `${method} ${url.slice(0, 40)}: no credentials → 401`);
    t.match(res.json(), { error: /^SEC-AUTH-00\d$/ });
  }
  for (const [method, url, body] of [
    ['GET', `${CERTS}/${id}`, undefined],
    ['GET', `${CERTS}/${encodeURIComponent(f.rsa.pem)}`, undefined],
    ['POST', `${CERTS}/find`, { certificate: f.rsa.pem }],
  ] as const) {
    const res = await nobody(method, url, body);
    t.equal(res.statusCode, 403, `${method} ${url.slice(0, 40)}: without search:certificates → 403`);
    t.equal(res.json().error, 'SEC-PERM-001');
  }

  const seen = await searcher('GET', `${CERTS}/${id}`);
  t.equal(seen.statusCode, 200);
  t.same(seen.json().permissions, {
    revoke: false,
    requestRevoke: true,
    update: false,
    requestUpdate: false,
    recover: false,
    requestRecover: false,
    enroll: false,
    requestEnroll: false,
    migrate: false,
    requestMigrate: false,
  }, 'the rights come from the caller\'s lifecycle permissions on the certificate\'s profile');

  // Import needs lifecycle:<module>:<profile|none>:import:direct.
  const refused = await searcher('POST', `${CERTS}/`, { certificate: f.ecCa.pem });
  t.equal(refused.statusCode, 403);
  t.match(refused.json(), { error: 'SEC-PERM-001', message: /lifecycle:discovery:none:import:direct/ });
  const otherProfile = await importer('POST', `${CERTS}/`, { certificate: f.ecCa.pem, profile: 'mail' });
  t.equal(otherProfile.statusCode, 403);
  t.match(otherProfile.json().message, /lifecycle:webra:mail:import:direct/);
  t.equal((await importer('POST', `${CERTS}/`, { certificate: f.ecCa.pem, profile: 'web' })).statusCode, 201);
  t.equal((await importer('POST', `${CERTS}/`, { certificate: f.ecLeaf.pem })).statusCode, 201, 'no profile: discovery / none');
  t.equal((await importer('GET', `${CERTS}/${id}`)).statusCode, 403, 'importing does not grant reading');

  // Hosts: certificate routes are webra, labels configuration; elsewhere they do not exist.
  const on = (host: string, url: string) => kernel.app.inject({ method: 'GET', url, headers: { host, ...ADMIN_HEADERS } });
  t.equal((await on('ra.example', `${CERTS}/${id}`)).statusCode, 200);
  const hidden = await on('admin.example', `${CERTS}/${id}`);
  t.equal(hidden.statusCode, 404);
  t.equal(hidden.json().error, 'HTTP-001', 'a wrong host sees no such route');
  t.equal((await on('admin.example', LABELS)).statusCode, 200);
  t.equal((await on('ra.example', LABELS)).json().error, 'HTTP-001');
  t.equal((await on('evil.example', `${CERTS}/${id}`)).statusCode, 404);
});
