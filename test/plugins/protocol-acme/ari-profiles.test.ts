/**
 * What no packaged client speaks, with the npm acme-client (it posts extra new-order fields unchanged) and
 * plain requests: ACME profiles (the directory's meta.profiles, an order's `profile` issuing under that
 * certificate profile, invalidProfile), ACME Renewal Information (RFC 9773: renewalInfo in the directory, the
 * window of a certificate from its lifetime, moved by an administrator's early renewal) and `replaces` (accepted
 * once, from the account holding the certificate). The certID is computed from openssl's reading of the
 * certificate. http-01 is answered by a server of the test, names resolve through a BIND9. SQLite and MariaDB.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { createServer } from 'node:http';
import acme from 'acme-client';
import t from 'tap';
import { startBind9 } from '../../helpers/bind9.js';
import { ADMIN_HEADERS } from '../../helpers/kernel.js';
import { acmeKernel } from './acme-kernel.js';
import { caller } from '../../helpers/security.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';

acme.setLogger(() => undefined);
const keyAuthorizations = new Map<string, string>();
const challengeServer = createServer((req, res) => {
  const value = keyAuthorizations.get((req.url ?? '').split('/').pop() ?? '');
  res.writeHead(value ? 200 : 404).end(value ?? '');
});
const httpPort = await freePort();
await new Promise<void>((resolve) => challengeServer.listen(httpPort, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => challengeServer.close(() => resolve())));
const bind = await startBind9(t);
const { kernel, port } = await acmeKernel(t, { bind, httpPort });
const admin = caller(kernel, { ...ADMIN_HEADERS, host: '127.0.0.1' });
for (const body of [
  { name: 'short', pkiConnector: 'local-ca', validityDays: 6, description: 'Six-day certificates', protocols: { acme: { enabled: true } } },
  { name: 'fleet', pkiConnector: 'local-ca', validityDays: 90, protocols: { acme: { enabled: true, profiles: ['short', 'missing'] } } },
]) {
  const res = await admin('POST', '/api/v1/certificate/profiles/', body);
  if (res.statusCode !== 201) throw new Error(res.body);
}
const directoryUrl = `http://127.0.0.1:${port}/acme/fleet/directory`;
const directory = (await (await fetch(directoryUrl)).json()) as { renewalInfo: string; meta: { profiles: Record<string, string> } };

async function newClient(): Promise<acme.Client> {
  const client = new acme.Client({ directoryUrl, accountKey: await acme.crypto.createPrivateKey() });
  await client.createAccount({ termsOfServiceAgreed: true });
  return client;
}

/** An order through to its certificate (http-01), with the extra new-order fields given. */
async function obtain(client: acme.Client, name: string, extra: Record<string, unknown> = {}): Promise<{ order: acme.Order; pem: string }> {
  const order = await client.createOrder({ identifiers: [{ type: 'dns', value: name }], ...extra } as never);
  for (const authz of await client.getAuthorizations(order)) {
    const challenge = authz.challenges.find((c) => c.type === 'http-01')!;
    keyAuthorizations.set(challenge.token, await client.getChallengeKeyAuthorization(challenge));
    await client.completeChallenge(challenge);
    await client.waitForValidStatus(challenge);
  }
  const [, csr] = await acme.crypto.createCsr({ commonName: name, altNames: [name] });
  const finalized = await client.finalizeOrder(order, csr);
  return { order: finalized, pem: await client.getCertificate(finalized) };
}

/** RFC 9773 §4.1 certID from openssl's reading: AKI keyid and the serial's DER content octets. */
function certIdOf(pem: string): string {
  const text = execFileSync('openssl', ['x509', '-noout', '-serial', '-ext', 'authorityKeyIdentifier'], { input: pem, encoding: 'utf8' });
  const serialHex = /serial=([0-9A-F]+)/.exec(text)![1]!;
  const der = (serialHex.length % 2 ? '0' : '') + serialHex;
  const content = parseInt(der.slice(0, 2), 16) >= 0x80 ? `00${der}` : der;
  const aki = /(?:keyid:)?((?:[0-9A-F]{2}:)+[0-9A-F]{2})/.exec(text.split('Authority Key Identifier')[1]!)![1]!.replace(/:/g, '');
  return `${Buffer.from(aki, 'hex').toString('base64url')}.${Buffer.from(content, 'hex').toString('base64url')}`;
}

const client = await newClient();
let first: { order: acme.Order; pem: string };

t.test('ACME profiles', async (t) => {
  t.same(directory.meta.profiles, { fleet: 'fleet', short: 'Six-day certificates' }, "meta.profiles: the directory's and the ACME profiles it names that exist");
  first = await obtain(client, 'short.acme.test', { profile: 'short' });
  t.equal((first.order as unknown as { profile?: string }).profile, 'short', 'the order says its profile');
  const cert = new X509Certificate(first.pem);
  const days = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 86_400_000;
  t.ok(days > 5.9 && days < 6.1, `issued under profile short: ${days.toFixed(2)} days`);
  await t.rejects(client.createOrder({ identifiers: [{ type: 'dns', value: 'x.acme.test' }], profile: 'missing' } as never), /invalidProfile|not offered/, 'a profile the directory names but that does not exist');
  await t.rejects(client.createOrder({ identifiers: [{ type: 'dns', value: 'x.acme.test' }], profile: 'default' } as never), /not offered/, 'a profile the directory does not offer');
});

t.test('renewal information', async (t) => {
  const certId = certIdOf(first.pem);
  t.equal(directory.renewalInfo, `http://127.0.0.1:${port}/acme/fleet/renewal-info`);
  const res = await fetch(`${directory.renewalInfo}/${certId}`);
  t.equal(res.status, 200, 'renewalInfo answers for the certificate');
  t.equal(res.headers.get('retry-after'), '21600');
  const info = (await res.json()) as { suggestedWindow: { start: string; end: string } };
  const cert = new X509Certificate(first.pem);
  const from = Date.parse(cert.validFrom);
  const lifetime = Date.parse(cert.validTo) - from;
  t.ok(Math.abs(Date.parse(info.suggestedWindow.start) - (from + (lifetime * 2) / 3)) < 2000, 'the window starts at 2/3 of the lifetime');
  t.ok(Date.parse(info.suggestedWindow.end) > Date.parse(info.suggestedWindow.start), 'and ends after it starts');
  const at = Date.now() + 60_000;
  const advanced = await admin('POST', '/api/v1/acme/renewal-info/advance', { profile: 'fleet', at });
  t.equal(advanced.json().updated, 1, 'the administrator advances the fleet');
  const moved = (await (await fetch(`${directory.renewalInfo}/${certId}`)).json()) as { suggestedWindow: { start: string } };
  t.equal(Date.parse(moved.suggestedWindow.start), Math.floor(at / 1000) * 1000, 'the window now starts when the administrator said');
  t.equal((await fetch(`${directory.renewalInfo}/AAAA.AAAA`)).status, 404, 'an unknown certificate');
  t.equal((await fetch(`${directory.renewalInfo}/not-a-cert-id`)).status, 400, 'a malformed identifier');
});

t.test('replaces', async (t) => {
  const certId = certIdOf(first.pem);
  const stranger = await newClient();
  await t.rejects(stranger.createOrder({ identifiers: [{ type: 'dns', value: 'short.acme.test' }], replaces: certId } as never), /no certificate of this account/, "another account cannot replace it");
  const renewal = await obtain(client, 'short.acme.test', { profile: 'short', replaces: certId });
  t.equal((renewal.order as unknown as { replaces?: string }).replaces, certId, 'the order says what it replaces');
  await t.rejects(client.createOrder({ identifiers: [{ type: 'dns', value: 'short.acme.test' }], replaces: certId } as never), /already replaces/, 'a certificate is replaced once');
});
