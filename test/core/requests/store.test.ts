import t from 'tap';
import { RequestStore, type NewRequest, type RequestObject } from '../../../core/requests/index.js';
import { onMysql } from '../../helpers/database.js';
import { bootKernel } from '../../helpers/kernel.js';

/**
 * The request store against the real schema (migration 0008), on SQLite and, with TEST_DATABASE_URL, on
 * MariaDB: the §2.5 shape, labels / metadata, optimistic updates, tenants and transactions.
 */
const TENANT = 'req-store';
const OTHER = 'req-store-other';
const T0 = Date.UTC(2025, 2, 14, 12, 0, 0);

/** The keys v2 Go requires of a WebRA enroll request (client-compat §2.5): in every object. */
const REQUIRED = ['_id', 'module', 'workflow', 'status', 'profile', 'template', 'holderId', 'registrationDate', 'lastModificationDate', 'removeAt'];

const FULL: NewRequest = {
  tenant: TENANT,
  module: 'webra',
  workflow: 'enroll',
  status: 'pending',
  profile: 'web-server',
  template: { subject: [{ element: 'cn.1', type: 'CN', value: 'www.example.com', editable: true }], sans: [{ type: 'DNSNAME', value: ['www.example.com'] }], keyType: 'rsa-2048' },
  dn: 'CN=www.example.com,O=Acme',
  requester: 'alice',
  approver: 'dave',
  contact: 'alice@example.com',
  team: 'web',
  requesterComment: 'for the shop',
  approverComment: 'ok',
  expirationDate: T0 + 86_400_000,
  removeAt: T0 + 30 * 86_400_000,
  certificateId: '65f2a0c0aaaaaaaaaaaaaaaa',
  holderId: 'holder-1',
  error: 'CA unreachable',
  externalId: { digicert: 'o-123' },
  retryAt: T0 + 60_000,
  retryCount: 2,
  requestedX509Data: { subject: 'CN=www.example.com', sans: ['www.example.com'] },
  dryRun: true,
  labels: [
    { key: 'env', value: 'prod' },
    { key: 'app', value: 'shop' },
    { key: 'env', value: 'prod' },
  ],
  metadata: [{ key: 'pki_connector', value: 'acme' }],
};

t.test('RequestStore', async (t) => {
  const kernel = await bootKernel(t);
  const { knex, engine } = kernel.db;
  t.equal(engine, onMysql() ? 'mysql' : 'sqlite', 'on the database under test');
  let clock = T0;
  const store = new RequestStore(knex, () => clock);
  const count = async (table: string, tenant = TENANT): Promise<number> => Number(((await knex(table).where({ tenant }).count({ n: '*' })) as { n: number | string }[])[0]!.n);

  t.test('a full request round-trips with every stored §2.5 key', async (t) => {
    const { version, request } = await store.insert(FULL);
    t.equal(version, 1);
    t.match(request._id, /^[0-9a-f]{24}$/);
    const { tenant: _tenant, labels: _labels, ...fields } = FULL;
    const expected: RequestObject = {
      ...fields,
      _id: request._id,
      profile: 'web-server',
      template: FULL.template!,
      holderId: 'holder-1',
      removeAt: FULL.removeAt!,
      registrationDate: T0,
      lastModificationDate: T0,
      // Each pair once, sorted by key then value.
      labels: [
        { key: 'app', value: 'shop' },
        { key: 'env', value: 'prod' },
      ],
      metadata: [{ key: 'pki_connector', value: 'acme' }],
      retryCount: 2,
      dryRun: true,
    } as RequestObject;
    t.same(request, expected, 'insert answers what was written');
    t.strictSame(await store.get(TENANT, request._id), { version: 1, request }, 'get reads the same');
    t.strictSame(await store.get(TENANT, request._id.toUpperCase()), { version: 1, request }, 'ids in either case');
    t.same(
      Object.keys(request).sort(),
      [
        ...REQUIRED,
        'dn', 'requester', 'approver', 'contact', 'team', 'requesterComment', 'approverComment', 'expirationDate', 'certificateId',
        'labels', 'metadata', 'error', 'externalId', 'retryAt', 'retryCount', 'requestedX509Data', 'dryRun',
      ].sort(),
      'every stored key',
    );
  });

  t.test('a bare request has the required keys, template {}', async (t) => {
    const { request } = await store.insert({ tenant: TENANT, module: 'webra', workflow: 'revoke', status: 'completed' });
    t.strictSame(request, {
      _id: request._id,
      module: 'webra',
      workflow: 'revoke',
      status: 'completed',
      profile: null,
      template: {},
      holderId: null,
      removeAt: null,
      registrationDate: T0,
      lastModificationDate: T0,
      labels: [],
      metadata: [],
      retryCount: 0,
      dryRun: false,
    } as unknown as RequestObject);
    for (const key of REQUIRED) t.ok(Object.hasOwn(request, key), `${key} present`);
  });

  t.test('optimistic updates', async (t) => {
    const { request } = await store.insert({ ...FULL, labels: [{ key: 'env', value: 'dev' }] });
    clock = T0 + 5_000;
    const approved = await store.update(TENANT, request._id, 1, { status: 'approved', approver: 'erin', approverComment: null, labels: [{ key: 'env', value: 'prod' }] });
    if (approved.outcome !== 'updated') throw new Error(`not updated: ${approved.outcome}`);
    t.equal(approved.stored.version, 2, 'the version grows');
    t.match(approved.stored.request, { status: 'approved', approver: 'erin', lastModificationDate: T0 + 5_000, registrationDate: T0, labels: [{ key: 'env', value: 'prod' }] });
    t.notOk('approverComment' in approved.stored.request, 'null clears');
    t.same(approved.stored.request.metadata, [{ key: 'pki_connector', value: 'acme' }], 'metadata untouched when absent');

    clock = T0 + 9_000;
    t.same(await store.update(TENANT, request._id, 1, { status: 'denied' }), { outcome: 'conflict', version: 2 }, 'a stale version is a conflict');
    t.strictSame(await store.get(TENANT, request._id), approved.stored, 'and changes nothing');
    const done = await store.update(TENANT, request._id, 2, { status: 'completed', certificateId: 'ABCDEF0123456789abcdef01', labels: [], metadata: [] });
    t.match(done, { outcome: 'updated', stored: { version: 3, request: { status: 'completed', lastModificationDate: T0 + 9_000, labels: [], metadata: [] } } });
    t.same(await store.update(TENANT, 'a'.repeat(24), 1, { status: 'denied' }), { outcome: 'missing' });
    t.same(await store.update(TENANT, 'not-an-id', 1, { status: 'denied' }), { outcome: 'missing' });
    clock = T0;
  });

  t.test('tenants do not see each other', async (t) => {
    const { request } = await store.insert({ ...FULL, tenant: OTHER });
    t.equal(await store.get(TENANT, request._id), null, 'get');
    t.same(await store.update(TENANT, request._id, 1, { status: 'canceled' }), { outcome: 'missing' }, 'update');
    t.match(await store.get(OTHER, request._id), { version: 1, request: { status: 'pending', labels: [{ key: 'app' }, { key: 'env' }] } }, 'untouched');
    t.equal(await count('request_labels', OTHER), 2, 'side rows carry the tenant');
  });

  t.test('a failed write leaves nothing half-written', async (t) => {
    const before = await Promise.all(['requests', 'request_labels', 'request_metadata'].map((table) => count(table)));
    const broken = [{ key: 'env', value: 'prod' }, { key: null as unknown as string, value: 'x' }];
    await t.rejects(store.insert({ ...FULL, labels: broken }), 'a label the database refuses');
    t.same(await Promise.all(['requests', 'request_labels', 'request_metadata'].map((table) => count(table))), before, 'no row, no label');

    const { request } = await store.insert(FULL);
    await t.rejects(store.update(TENANT, request._id, 1, { status: 'approved', labels: broken }));
    t.match(await store.get(TENANT, request._id), { version: 1, request: { status: 'pending', labels: [{ key: 'app' }, { key: 'env' }] } }, 'update rolled back');
  });

  t.test('secrets and unknown values are refused before anything is written', async (t) => {
    const before = await count('requests');
    await t.rejects(store.insert({ ...FULL, workflow: 'import', template: { privateKey: '-----BEGIN PRIVATE KEY-----' } }), /template\.privateKey/);
    await t.rejects(store.insert({ ...FULL, template: { extra: [{ Password: { value: 'x' } }] } }), /template\.extra\.0\.Password/);
    await t.rejects(store.insert({ ...FULL, status: 'processing' as never }), /unknown status/);
    await t.rejects(store.insert({ ...FULL, workflow: 'challenge' as never }), /unknown workflow/);
    t.equal(await count('requests'), before);
  });
});
