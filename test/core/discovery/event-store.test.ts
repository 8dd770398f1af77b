import t from 'tap';
import { DiscoveryEventStore, type DiscoveryEventInput } from '../../../core/discovery/index.js';
import { ProblemError } from '../../../core/errors/index.js';
import { onMysql } from '../../helpers/database.js';
import { bootKernel } from '../../helpers/kernel.js';

const NOW = Date.UTC(2025, 2, 14, 12, 0, 0);
const event = (n: number): DiscoveryEventInput => ({ campaign: 'dc-east', sessionId: 's-1', code: 'NETSCAN', status: 'success', hostname: `host${n}.example.com`, port: 443 });

async function setup(t: Parameters<typeof bootKernel>[0]) {
  const kernel = await bootKernel(t);
  const { knex } = kernel.db;
  const count = async (tenant?: string) => Number(((await knex('discovery_events').modify((q) => (tenant ? q.where({ tenant }) : q)).count({ n: '*' })) as { n: number | string }[])[0]!.n);
  return { knex, store: new DiscoveryEventStore(knex, () => NOW), count, engine: kernel.db.engine };
}

t.test('an event round-trips with every key', async (t) => {
  const { store, engine } = await setup(t);
  t.equal(engine, onMysql() ? 'mysql' : 'sqlite', 'on the database under test');
  const input = {
    campaign: 'dc-east',
    sessionId: '6f1c2a9e-0d4b-4c55-9a1e-3b7d2f8e1c00',
    code: 'NETIMPORT',
    status: 'failure',
    errorCode: 'HCL-NETIMPORT-DCC-001',
    errorMessage: Array.from('Décodage impossible 🔒 '.repeat(200)).slice(0, 4096).join(''),
    hostname: 'web1.example.com',
    ip: '2001:db8::1',
    port: 65535,
    source: 'C:\\certs\\web1.pfx',
    unknownKey: 'ignored',
  } as DiscoveryEventInput;
  const origin = { clientVersion: 'horizon-cli/1.12.0', clientIp: '192.0.2.10', clientId: 'agent-1', certificateId: 'AA00000000000000000000C1' };
  const [stored] = await store.append('tenant-a', input, origin);
  const { unknownKey: _, ...known } = input as DiscoveryEventInput & { unknownKey: string };
  t.same(stored, { _id: stored!._id, ...known, timestamp: NOW, clientVersion: 'horizon-cli/1.12.0', clientIp: '192.0.2.10', clientId: 'agent-1', certificateId: 'aa00000000000000000000c1' });
  t.match(stored!._id, /^[0-9a-f]{24}$/, 'ids as core/db/ids.ts makes them');
  t.equal(Array.from(stored!.errorMessage!).length, 4096, 'a message of the maximal length (in characters) is kept whole');
  t.same(await store.get('tenant-a', stored!._id), stored, 'read back as appended');
  t.same(await store.get('tenant-a', stored!._id.toUpperCase()), stored, 'the id in either case');
  t.equal(await store.get('tenant-a', 'not-an-id'), undefined);

  const [minimal] = await store.append('tenant-a', { campaign: 'lab', code: 'SESSION-END', status: 'success', sessionId: null, port: null });
  t.same(await store.get('tenant-a', minimal!._id), {
    _id: minimal!._id,
    campaign: 'lab',
    sessionId: null,
    code: 'SESSION-END',
    status: 'success',
    errorCode: null,
    errorMessage: null,
    hostname: null,
    ip: null,
    port: null,
    source: null,
    timestamp: NOW,
    clientVersion: null,
    clientIp: null,
    clientId: null,
    certificateId: null,
  }, 'absent and null keys read back as null');
  t.same(await store.append('tenant-a', []), [], 'an empty batch writes nothing');
});

t.test('10,000 events in one call', async (t) => {
  const { knex, store, count } = await setup(t);
  const batch = Array.from({ length: 10_000 }, (_, i) => event(i));
  const stored = await store.append('tenant-a', batch, { clientId: 'agent-1' });
  t.equal(stored.length, 10_000);
  t.equal(await count('tenant-a'), 10_000, 'every event is written');
  t.equal(new Set(stored.map((e) => e._id)).size, 10_000, 'each with its own id');
  const hosts = (await knex('discovery_events').where({ tenant: 'tenant-a' }).pluck('hostname')) as string[];
  t.same(new Set(hosts), new Set(batch.map((e) => e.hostname)), 'as sent');
});

t.test('an invalid event refuses the whole batch', async (t) => {
  const { store, count } = await setup(t);
  const refused = async (events: unknown, message: RegExp, what: string) => {
    const err = await store.append('tenant-a', events as DiscoveryEventInput[]).catch((e: unknown) => e);
    t.ok(err instanceof ProblemError, `${what}: a problem`);
    t.match(err, { code: 'DSC-002', status: 400, message }, what);
  };
  const good = Array.from({ length: 20 }, (_, i) => event(i));
  const among = (bad: Record<string, unknown>) => [...good.slice(0, 7), { ...event(99), ...bad }, ...good.slice(7)];
  await refused(among({ port: 70000 }), /^event 7: port must be <= 65535/, 'port above 65535');
  await refused(among({ port: -1 }), /^event 7: port must be >= 0/, 'negative port');
  await refused(among({ port: 443.5 }), /^event 7: port must be integer/, 'fractional port');
  await refused(among({ port: '443' }), /^event 7: port must be integer/, 'port as text');
  await refused(among({ status: 'ok' }), /^event 7: status must be equal to one of the allowed values/, 'unknown status');
  await refused(among({ status: 'SUCCESS' }), /^event 7: status/, 'status in capitals');
  await refused(among({ campaign: undefined }), /^event 7: campaign is required/, 'no campaign');
  await refused(among({ code: '' }), /^event 7: code must NOT have fewer than 1 characters/, 'empty code');
  await refused(among({ code: 'X'.repeat(65) }), /^event 7: code must NOT have more than 64 characters/, 'long code');
  await refused(among({ hostname: 'h'.repeat(256) }), /^event 7: hostname must NOT have more than 255/, 'long host name');
  await refused(among({ errorMessage: 'm'.repeat(4097) }), /^event 7: errorMessage must NOT have more than 4096/, 'long message');
  await refused(among({ ip: 10 }), /^event 7: ip must be string,null/, 'ip not text');
  await refused([...good, null], /^event 20 must be object/, 'null among events');
  await refused([...Array.from({ length: 9_999 }, (_, i) => event(i)), { ...event(0), port: 1e6 }], /^event 9999: port/, 'the last of 10,000');
  await refused({ ...event(0), status: 'failed' }, /^status must be equal/, 'a single object names no index');
  await refused('text', /^event must be object/, 'not an object');
  t.equal(await count(), 0, 'nothing was written');
});

t.test('tenants are isolated', async (t) => {
  const { store, count } = await setup(t);
  const [a] = await store.append('tenant-a', event(1));
  const [b] = await store.append('tenant-b', [event(2), event(3)]);
  t.same(await store.get('tenant-a', a!._id), a);
  t.equal(await store.get('tenant-b', a!._id), undefined, 'another tenant’s event is not found');
  t.equal(await store.get('tenant-a', b!._id), undefined);
  t.same(await store.get('tenant-b', b!._id), b);
  t.equal(await count('tenant-a'), 1);
  t.equal(await count('tenant-b'), 2);
});
