import t from 'tap';
import { createPrincipal } from '../../helpers/security.js';
import { admin, bootProfiles, fakeConnector, URL } from './fixture.js';

t.test('profiles: create with defaults, read, replace, delete — each change one event', async (t) => {
  const { kernel } = await bootProfiles(t);
  await fakeConnector(kernel, 'ca-one');
  await fakeConnector(kernel, 'ca-two');
  const call = admin(kernel);

  const created = await call('POST', URL, { name: 'web', pkiConnector: 'ca-one' });
  t.equal(created.statusCode, 201, created.body);
  t.equal(created.headers['content-type'], 'application/json');
  const body = created.json();
  t.match(body, {
    name: 'web',
    module: 'webra',
    enabled: true,
    pkiConnector: 'ca-one',
    validityDays: 365,
    keyUsage: ['digitalSignature', 'keyEncipherment'],
    extendedKeyUsage: ['serverAuth', 'clientAuth'],
    subject: [{ element: 'cn.1', mandatory: true, editable: true }],
    sans: [{ type: 'DNSNAME', editable: true, min: 0, max: 10 }],
    labels: [],
    owner: { editable: true },
    team: { editable: true },
    contactEmail: { editable: true },
    authorizations: { workflows: {}, approve: [], selfApproval: false },
    authorizationMode: 'standard',
    challenge: { validityMinutes: 10080 },
    version: 1,
  });
  t.same(body.keyPolicy, {
    authorizedKeyTypes: ['ec-secp256r1', 'ec-secp384r1', 'rsa-2048', 'rsa-3072', 'rsa-4096', 'ed-25519'],
    defaultKeyType: 'ec-secp256r1',
    centralized: true,
    decentralized: true,
    preferredEnrollmentMode: 'decentralized',
    escrow: false,
    p12passwordMode: 'generated',
    showP12OnEnroll: true,
    showP12PasswordOnEnroll: true,
  });
  t.match(body._id, /^[0-9a-f]{24}$/);
  t.type(body.createdAt, 'number');

  const one = await call('GET', `${URL}web`);
  t.equal(one.statusCode, 200);
  t.same(one.json(), body, 'GET :name answers what POST answered');
  t.same((await call('GET', URL)).json().map((p: { name: string }) => p.name), ['web']);

  // PUT what GET answered, changed: _id / version / dates echoed back are accepted.
  const replaced = await call('PUT', URL, {
    ...(one.json() as object),
    pkiConnector: 'ca-two',
    subject: [
      { element: 'CN.1', mandatory: true, regex: '[a-z0-9.-]+' },
      { element: 'o', value: 'Acme', editable: false },
      { element: 'serialNumber', editable: true },
    ],
    labels: [{ label: 'env', mandatory: true }],
  });
  t.equal(replaced.statusCode, 200, replaced.body);
  t.match(replaced.json(), {
    _id: body._id,
    pkiConnector: 'ca-two',
    version: 2,
    createdAt: body.createdAt,
    subject: [
      { element: 'cn.1', mandatory: true, editable: true, regex: '[a-z0-9.-]+' },
      { element: 'o.1', value: 'Acme', editable: false, mandatory: false },
      { element: 'serialnumber.1', editable: true },
    ],
    labels: [{ label: 'env', mandatory: true, editable: true }],
  });
  const row = await kernel.db.knex('certificate_profiles').where({ tenant: 'default', name: 'web' }).first();
  t.equal(row.pki_connector, 'ca-two', 'the connector is a column (PKI-CONN-005 looks it up)');
  t.equal(row.updated_by, 'administrator');

  t.equal((await call('PUT', URL, { name: 'nope', pkiConnector: 'ca-one' })).json().error, 'PRF-003', 'PUT of an unknown name');
  const deleted = await call('DELETE', `${URL}web`);
  t.equal(deleted.statusCode, 204);
  const gone = await call('GET', `${URL}web`);
  t.equal(gone.statusCode, 404);
  t.equal(gone.json().error, 'PRF-003');
  t.equal((await call('DELETE', `${URL}web`)).json().error, 'PRF-003');

  const events = (await kernel.db.knex('events').where({ module: 'profiles' }).orderBy('seq').select('code', 'object_id', 'principal', 'object_type')) as Record<string, string>[];
  t.same(
    events.map((e) => `${e.code} ${e.object_id} ${e.principal} ${e.object_type}`),
    ['PROFILE-CREATED web administrator profile', 'PROFILE-UPDATED web administrator profile', 'PROFILE-DELETED web administrator profile'],
  );
});

t.test('profiles: every invalid body is a 400 with its code and a detail, and nothing is written', async (t) => {
  const { kernel } = await bootProfiles(t);
  await fakeConnector(kernel, 'ca');
  const call = admin(kernel);
  const base = { name: 'p', pkiConnector: 'ca' };
  const cases: [string, object, string, RegExp][] = [
    ['unknown top-level field', { ...base, colour: 'red' }, 'PRF-002', /colour/],
    ['unknown nested field', { ...base, keyPolicy: { escrowed: true } }, 'PRF-002', /escrowed/],
    ['unknown field in a subject rule', { ...base, subject: [{ element: 'cn.1', computed: true }] }, 'PRF-002', /computed/],
    ['no connector', { name: 'p' }, 'PRF-002', /pkiConnector/],
    ['unknown connector', { ...base, pkiConnector: 'nope' }, 'PRF-002', /no PKI connector named "nope"/],
    ['a name that is no permission segment', { ...base, name: 'a b' }, 'PRF-002', /name/],
    ['regex that does not compile', { ...base, subject: [{ element: 'cn.1', regex: '([a-z' }] }, 'PRF-002', /does not compile/],
    ['SAN regex that does not compile', { ...base, sans: [{ type: 'DNSNAME', regex: '*' }] }, 'PRF-002', /does not compile/],
    ['unknown subject element', { ...base, subject: [{ element: 'colour.1' }] }, 'PRF-002', /unknown subject element "colour.1"/],
    ['index 0', { ...base, subject: [{ element: 'cn.0' }] }, 'PRF-002', /cn\.0/],
    ['element twice', { ...base, subject: [{ element: 'cn.1' }, { element: 'CN' }] }, 'PRF-002', /listed twice/],
    ['unknown SAN type', { ...base, sans: [{ type: 'PIGEON' }] }, 'PRF-002', /sans/],
    ['SAN type twice', { ...base, sans: [{ type: 'DNSNAME' }, { type: 'DNSNAME' }] }, 'PRF-002', /listed twice/],
    ['min above max', { ...base, sans: [{ type: 'DNSNAME', min: 3, max: 2 }] }, 'PRF-002', /min \(3\) is greater than max \(2\)/],
    ['unknown key type', { ...base, keyPolicy: { authorizedKeyTypes: ['rsa-1024'] } }, 'PRF-002', /authorizedKeyTypes/],
    ['default key type not authorized', { ...base, keyPolicy: { authorizedKeyTypes: ['rsa-2048'] } }, 'PRF-002', /defaultKeyType ec-secp256r1 is not among/],
    ['no enrollment mode', { ...base, keyPolicy: { centralized: false, decentralized: false } }, 'PRF-002', /at least one of centralized and decentralized/],
    ['preferred mode disabled', { ...base, keyPolicy: { decentralized: false } }, 'PRF-002', /preferredEnrollmentMode decentralized/],
    ['unknown key usage', { ...base, keyUsage: ['signEverything'] }, 'PRF-002', /keyUsage/],
    ['unknown extended key usage', { ...base, extendedKeyUsage: ['serverAuth', 'flying'] }, 'PRF-002', /flying/],
    ['fixed value against its own regex', { ...base, subject: [{ element: 'o.1', value: 'ACME', editable: false, regex: '[a-z]+' }] }, 'PRF-002', /own regex/],
    ['mandatory, fixed, empty', { ...base, owner: { mandatory: true, editable: false } }, 'PRF-002', /owner/],
    ['unknown workflow in authorizations', { ...base, authorizations: { workflows: { fly: { direct: ['*'] } } } }, 'PRF-002', /fly/],
    ['unknown password policy', { ...base, keyPolicy: { p12passwordMode: 'manual', passwordPolicy: 'Nope' } }, 'PRF-002', /password policy named "Nope"/],
    ['validity of 0 days', { ...base, validityDays: 0 }, 'PRF-002', /validityDays/],
  ];
  for (const [what, body, code, detail] of cases) {
    const res = await call('POST', URL, body);
    t.equal(res.statusCode, 400, `${what}: ${res.body}`);
    t.equal(res.headers['content-type'], 'application/problem+json');
    t.equal(res.json().error, code, what);
    t.match(res.json().detail, detail, `${what}: the detail says what is wrong`);
  }
  const count = async (table: string, where: object = {}): Promise<number> => Number(((await kernel.db.knex(table).where(where).count({ n: '*' })) as { n: number | string }[])[0]!.n);
  t.equal(await count('certificate_profiles'), 0, 'no row written');
  t.equal(await count('events', { module: 'profiles' }), 0, 'no event written');

  t.equal((await call('POST', URL, base)).statusCode, 201);
  const again = await call('POST', URL, base);
  t.equal(again.statusCode, 400);
  t.equal(again.json().error, 'PRF-004');
  const bad = await call('PUT', URL, { ...base, keyPolicy: { authorizedKeyTypes: ['rsa-2048'] } });
  t.equal(bad.json().error, 'PRF-002');
  t.equal((await call('GET', `${URL}p`)).json().version, 1, 'a refused PUT changes nothing');
  t.equal(await count('events', { module: 'profiles' }), 1, 'one event: the creation');

  // A manual password mode naming an existing policy (Horizon-Default is an alias of Default).
  const manual = await call('POST', URL, { name: 'manual', pkiConnector: 'ca', keyPolicy: { p12passwordMode: 'manual', passwordPolicy: 'Horizon-Default' } });
  t.equal(manual.statusCode, 201, manual.body);
});

t.test('profiles: reads need configuration:profiles:read, changes :write', async (t) => {
  const { kernel } = await bootProfiles(t);
  await fakeConnector(kernel, 'ca');
  t.equal((await admin(kernel)('POST', URL, { name: 'web', pkiConnector: 'ca' })).statusCode, 201);
  const reader = await createPrincipal(kernel, 'reader', { permissions: [{ value: 'configuration:profiles:read' }] });
  const writer = await createPrincipal(kernel, 'writer', { permissions: [{ value: 'configuration:profiles:write' }] });
  const as = (headers: Record<string, string>, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) => kernel.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  t.equal((await as(reader.headers, 'GET', `${URL}web`)).statusCode, 200);
  const refused = await as(reader.headers, 'POST', URL, { name: 'other', pkiConnector: 'ca' });
  t.equal(refused.statusCode, 403);
  t.equal((await as(reader.headers, 'DELETE', `${URL}web`)).statusCode, 403);
  t.equal((await as(writer.headers, 'GET', URL)).statusCode, 200, 'write implies read');
  const created = await as(writer.headers, 'POST', URL, { name: 'other', pkiConnector: 'ca' });
  t.equal(created.statusCode, 201);
  const event = await kernel.db.knex('events').where({ code: 'PROFILE-CREATED', object_id: 'other' }).first();
  t.equal(event.principal, 'writer');
});
