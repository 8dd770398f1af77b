/**
 * The rfc2136 provisioner against a real BIND9 and a real Knot DNS on loopback ports (started once for this file,
 * stopped by PID at teardown): the shared conformance suite on both, TSIG hmac-sha256 and hmac-sha512, the zone
 * found by asking the server, and the refusals: a wrong secret or an unknown key → ConfigurationError naming the
 * key and nothing written; a zone the server does not serve → PermanentError naming the zone. Records are read
 * back with kdig, straight from the server.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { ConfigurationError, PermanentError, TransientError, type DcvProvisioner } from '@certwright/sdk';
import type { ProvidedServices } from '../../../core/plugins/provided.js';
import { startBind9 } from '../../helpers/bind9.js';
import { startKnot } from '../../helpers/knot.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';
import { kdigTxt, runDcvConformance } from '../dcv-conformance.js';

const kernel = await bootKernel(t);
const bind = await startBind9(t, 'rfc2136.test');
const knot = await startKnot(t, 'knot.test');
const knot512 = await startKnot(t, 'knot512.test', { algorithm: 'hmac-sha512' });

const provided = kernel.container.resolve('provided') as ProvidedServices;
const factory = provided.dcvProvisioners.get('rfc2136');
if (!factory) throw new Error('the rfc2136 provisioner is not registered');

async function credential(name: string, secret: string, targets: string[] | undefined = ['dcv']): Promise<void> {
  const res = await kernel.app.inject({
    method: 'POST',
    url: '/api/v1/security/credentials/',
    headers: { host: 'localhost', ...ADMIN_HEADERS },
    payload: { name, type: 'raw', secret: { value: secret }, ...(targets ? { targets } : {}) },
  });
  if (res.statusCode >= 300) throw new Error(`credential ${name}: ${res.statusCode} ${res.body}`);
}

async function provisioner(name: string, config: Record<string, unknown>): Promise<DcvProvisioner> {
  return factory!({ name, config });
}

await credential('bind-tsig', bind.tsig.secret);
await credential('knot-tsig', knot.tsig.secret, undefined);
await credential('knot512-tsig', knot512.tsig.secret);
await credential('wrong-tsig', randomBytes(32).toString('base64'));

t.test('BIND9: conformance (hmac-sha256)', async (t) => {
  t.equal(provided.dcvProvisioners.pluginOf('rfc2136'), 'dcv-rfc2136', 'registered by the dcv-rfc2136 plugin');
  const p = await provisioner('bind', { server: '127.0.0.1', port: bind.port, keyName: bind.tsig.name, keyCredential: 'bind-tsig' });
  await runDcvConformance(t, p, { zone: bind.zone, readTxt: kdigTxt(bind.port) });
});

t.test('BIND9: conformance with the zone found by asking the server (no zone in the record)', async (t) => {
  const p = await provisioner('bind-nozone', { server: 'localhost', port: bind.port, keyName: bind.tsig.name, keyCredential: 'bind-tsig' });
  t.equal(await p.findZone!(`_acme-challenge.deep.below.${bind.zone}`), bind.zone, 'findZone answers the SOA owner');
  await runDcvConformance(t, p, { zone: bind.zone, readTxt: kdigTxt(bind.port), passZone: false });
});

t.test('Knot DNS: conformance (hmac-sha256)', async (t) => {
  const p = await provisioner('knot', { server: '127.0.0.1', port: knot.port, keyName: knot.tsig.name, keyCredential: 'knot-tsig' });
  await runDcvConformance(t, p, { zone: knot.zone, readTxt: kdigTxt(knot.port) });
});

t.test('Knot DNS: conformance (hmac-sha512)', async (t) => {
  const p = await provisioner('knot512', { server: '127.0.0.1', port: knot512.port, keyName: knot512.tsig.name, keyAlgorithm: 'hmac-sha512', keyCredential: 'knot512-tsig' });
  await runDcvConformance(t, p, { zone: knot512.zone, readTxt: kdigTxt(knot512.port) });
});

t.test('a long value (over 255 bytes, two strings) and one with spaces and quotes round-trip', async (t) => {
  const p = await provisioner('bind-long', { server: '127.0.0.1', port: bind.port, keyName: bind.tsig.name, keyCredential: 'bind-tsig' });
  const fqdn = `_acme-challenge.long.${bind.zone}`;
  const long = 'x'.repeat(300);
  const odd = 'a "quoted" value; with \\ spaces';
  await p.present({ fqdn, type: 'TXT', value: long, zone: bind.zone });
  await p.present({ fqdn, type: 'TXT', value: odd, zone: bind.zone });
  t.same((await kdigTxt(bind.port)(fqdn)).sort(), [odd, long].sort());
  await p.cleanUp({ fqdn, type: 'TXT', value: long, zone: bind.zone });
  await p.cleanUp({ fqdn, type: 'TXT', value: odd, zone: bind.zone });
  t.same(await kdigTxt(bind.port)(fqdn), []);
});

for (const [server, port, keyName, zone] of [
  ['BIND9', bind.port, bind.tsig.name, bind.zone],
  ['Knot DNS', knot.port, knot.tsig.name, knot.zone],
] as const) {
  t.test(`${server}: a wrong TSIG secret → ConfigurationError naming the key, nothing written`, async (t) => {
    const p = await provisioner(`${server}-wrong`, { server: '127.0.0.1', port, keyName, keyCredential: 'wrong-tsig' });
    const fqdn = `_acme-challenge.wrong.${zone}`;
    const error = await p.present({ fqdn, type: 'TXT', value: 'never-written', zone }).catch((e: unknown) => e);
    t.type(error, ConfigurationError);
    t.match((error as Error).message, new RegExp(`TSIG key "${keyName}".*BADSIG`), (error as Error).message);
    t.match((error as Error).message, /wrong-tsig/, 'names the credential');
    t.same(await kdigTxt(port)(fqdn), [], 'nothing written');
    await t.rejects(p.cleanUp({ fqdn, type: 'TXT', value: 'never-written', zone }), ConfigurationError, 'cleanUp is refused alike');
  });

  t.test(`${server}: an unknown key name → ConfigurationError (BADKEY)`, async (t) => {
    const p = await provisioner(`${server}-unknown`, { server: '127.0.0.1', port, keyName: 'no-such-key', keyCredential: 'wrong-tsig' });
    const fqdn = `_acme-challenge.unknown.${zone}`;
    const error = await p.present({ fqdn, type: 'TXT', value: 'never-written', zone }).catch((e: unknown) => e);
    t.type(error, ConfigurationError);
    t.match((error as Error).message, /TSIG key "no-such-key".*BADKEY/, (error as Error).message);
    t.same(await kdigTxt(port)(fqdn), [], 'nothing written');
  });

  t.test(`${server}: a zone the server does not serve → PermanentError naming the zone`, async (t) => {
    const p = await provisioner(`${server}-elsewhere`, { server: '127.0.0.1', port, keyName, keyCredential: server === 'BIND9' ? 'bind-tsig' : 'knot-tsig' });
    const error = await p.present({ fqdn: '_acme-challenge.www.elsewhere.example', type: 'TXT', value: 'v', zone: 'elsewhere.example' }).catch((e: unknown) => e);
    t.type(error, PermanentError);
    t.notOk(error instanceof ConfigurationError, 'not a key problem');
    t.match((error as Error).message, /elsewhere\.example/, (error as Error).message);
  });
}

t.test('a name outside the zone given → PermanentError before anything is sent', async (t) => {
  const p = await provisioner('bind-outside', { server: '127.0.0.1', port: bind.port, keyName: bind.tsig.name, keyCredential: 'bind-tsig' });
  await t.rejects(p.present({ fqdn: '_acme-challenge.example.org', type: 'TXT', value: 'v', zone: bind.zone }), PermanentError);
});

t.test('a missing credential → ConfigurationError naming it', async (t) => {
  const p = await provisioner('bind-nocred', { server: '127.0.0.1', port: bind.port, keyName: bind.tsig.name, keyCredential: 'no-such-credential' });
  const error = await p.present({ fqdn: `_acme-challenge.nocred.${bind.zone}`, type: 'TXT', value: 'v', zone: bind.zone }).catch((e: unknown) => e);
  t.type(error, ConfigurationError);
  t.match((error as Error).message, /no-such-credential/);
});

t.test('no server listening → TransientError', async (t) => {
  const port = await freePort();
  const p = await provisioner('nobody', { server: '127.0.0.1', port, keyName: 'k', keyCredential: 'bind-tsig', timeoutMs: 500 });
  await t.rejects(p.present({ fqdn: `_acme-challenge.x.${bind.zone}`, type: 'TXT', value: 'v', zone: bind.zone }), TransientError);
});
