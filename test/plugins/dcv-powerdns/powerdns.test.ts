/**
 * The powerdns provisioner against a real PowerDNS Authoritative server (gsqlite3 backend) on loopback ports,
 * started once for this file: the shared conformance suite (records read back over DNS with kdig, straight from
 * pdns_server), concurrent writers of one name, and the refusals: a wrong API key → ConfigurationError, nothing
 * written; an unknown zone → PermanentError naming it; the configured-URL egress policy applies.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { ConfigurationError, PermanentError, type DcvProvisioner } from '@certwright/sdk';
import type { ProvidedServices } from '../../../core/plugins/provided.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { startPowerDns } from '../../helpers/powerdns.js';
import { kdigTxt, runDcvConformance } from '../dcv-conformance.js';

const kernel = await bootKernel(t);
const pdns = await startPowerDns(t, 'pdns.test');
const provided = kernel.container.resolve('provided') as ProvidedServices;
const factory = provided.dcvProvisioners.get('powerdns');
if (!factory) throw new Error('the powerdns provisioner is not registered');
const readTxt = kdigTxt(pdns.port);

async function credential(name: string, secret: string, targets?: string[]): Promise<void> {
  const res = await kernel.app.inject({
    method: 'POST',
    url: '/api/v1/security/credentials/',
    headers: { host: 'localhost', ...ADMIN_HEADERS },
    payload: { name, type: 'raw', secret: { value: secret }, ...(targets ? { targets } : {}) },
  });
  if (res.statusCode >= 300) throw new Error(`credential ${name}: ${res.statusCode} ${res.body}`);
}
await credential('pdns-key', pdns.apiKey, ['dcv']);
await credential('pdns-wrong', randomBytes(24).toString('base64url'));
await credential('pdns-other-target', pdns.apiKey, ['trigger']);

const local = { url: pdns.apiUrl, allowHttp: true, allowPrivateNetworks: true };
const provisioner = async (name: string, config: Record<string, unknown>): Promise<DcvProvisioner> => factory({ name, config });

t.test('conformance', async (t) => {
  t.equal(provided.dcvProvisioners.pluginOf('powerdns'), 'dcv-powerdns', 'registered by the dcv-powerdns plugin');
  const p = await provisioner('pdns', { ...local, apiKeyCredential: 'pdns-key' });
  await runDcvConformance(t, p, { zone: pdns.zone, readTxt });
});

t.test('conformance with the zone found through the API (no zone in the record)', async (t) => {
  const p = await provisioner('pdns-nozone', { ...local, apiKeyCredential: 'pdns-key' });
  t.equal(await p.findZone!(`_acme-challenge.a.b.${pdns.zone}`), pdns.zone);
  t.equal(await p.findZone!('_acme-challenge.example.org'), null);
  await runDcvConformance(t, p, { zone: pdns.zone, readTxt, passZone: false });
});

t.test('values with quotes, backslashes, spaces and over 255 bytes round-trip', async (t) => {
  const p = await provisioner('pdns-odd', { ...local, apiKeyCredential: 'pdns-key' });
  const fqdn = `_acme-challenge.odd.${pdns.zone}`;
  const values = ['a "quoted" \\ value; $(id)', 'y'.repeat(300)];
  for (const value of values) await p.present({ fqdn, type: 'TXT', value, zone: pdns.zone });
  t.same((await readTxt(fqdn)).sort(), [...values].sort());
  for (const value of values) await p.cleanUp({ fqdn, type: 'TXT', value, zone: pdns.zone });
  t.same(await readTxt(fqdn), []);
});

t.test('concurrent presents of one name by two instances all land', async (t) => {
  const [p1, p2] = [await provisioner('pdns-c1', { ...local, apiKeyCredential: 'pdns-key' }), await provisioner('pdns-c2', { ...local, apiKeyCredential: 'pdns-key' })];
  const fqdn = `_acme-challenge.concurrent.${pdns.zone}`;
  const values = Array.from({ length: 6 }, (_, i) => `value-${i}-${randomBytes(4).toString('hex')}`);
  await Promise.all(values.map((value, i) => (i % 2 ? p1 : p2).present({ fqdn, type: 'TXT', value, zone: pdns.zone })));
  t.same((await readTxt(fqdn)).sort(), [...values].sort());
  await Promise.all(values.map((value, i) => (i % 2 ? p2 : p1).cleanUp({ fqdn, type: 'TXT', value, zone: pdns.zone })));
  t.same(await readTxt(fqdn), []);
});

t.test('a wrong API key → ConfigurationError naming the credential, nothing written', async (t) => {
  const p = await provisioner('pdns-wrong', { ...local, apiKeyCredential: 'pdns-wrong' });
  const fqdn = `_acme-challenge.wrong.${pdns.zone}`;
  const error = await p.present({ fqdn, type: 'TXT', value: 'never-written', zone: pdns.zone }).catch((e: unknown) => e);
  t.type(error, ConfigurationError);
  t.match((error as Error).message, /refused the API key of credential "pdns-wrong".*HTTP 401/, (error as Error).message);
  t.same(await readTxt(fqdn), [], 'nothing written');
});

t.test('a credential not meant for dcv → ConfigurationError', async (t) => {
  const p = await provisioner('pdns-target', { ...local, apiKeyCredential: 'pdns-other-target' });
  const error = await p.present({ fqdn: `_acme-challenge.target.${pdns.zone}`, type: 'TXT', value: 'v', zone: pdns.zone }).catch((e: unknown) => e);
  t.type(error, ConfigurationError);
  t.match((error as Error).message, /pdns-other-target/);
});

t.test('a zone PowerDNS does not have → PermanentError naming it', async (t) => {
  const p = await provisioner('pdns-elsewhere', { ...local, apiKeyCredential: 'pdns-key' });
  const error = await p.present({ fqdn: '_acme-challenge.www.elsewhere.example', type: 'TXT', value: 'v', zone: 'elsewhere.example' }).catch((e: unknown) => e);
  t.type(error, PermanentError);
  t.match((error as Error).message, /no zone elsewhere\.example/, (error as Error).message);
  t.equal(await p.findZone!('_acme-challenge.www.elsewhere.example'), null);
});

t.test('the egress policy of configured URLs applies: http and private addresses refused by default', async (t) => {
  const p = await provisioner('pdns-strict', { url: pdns.apiUrl, apiKeyCredential: 'pdns-key' });
  const error = await p.present({ fqdn: `_acme-challenge.strict.${pdns.zone}`, type: 'TXT', value: 'v', zone: pdns.zone }).catch((e: unknown) => e);
  t.type(error, ConfigurationError, 'an EgressDeniedError, a ConfigurationError');
  t.match((error as Error).message, /https/);
  t.same(await readTxt(`_acme-challenge.strict.${pdns.zone}`), []);
});
