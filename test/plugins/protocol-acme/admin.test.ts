/**
 * Administration of the ACME server (/api/v1/acme/…): who may call it (no credentials 401, no
 * configuration:acme permission 403, a host without the configuration capability 404), listing and filtering
 * accounts and orders with 1-based pages, deactivating an account (its next ACME request is refused),
 * revoking an order's certificate, and the EAB configuration types' standard routes. Runs on SQLite and MariaDB.
 */
import t from 'tap';
import { bootKernel, ENROLLMENT_BOOTSTRAP } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller, createPrincipal } from '../../helpers/security.js';
import { JwsClient } from './jws-client.js';

const kernel = await bootKernel(t, {
  ...ENROLLMENT_BOOTSTRAP,
  certwright: { endpoints: [{ host: 'localhost', configuration: true, acme: true, webra: true }, { host: 'acme.example', acme: true }] as never },
});
const admin = caller(kernel, ADMIN_HEADERS);
const base = 'http://localhost';
const client = await JwsClient.create(kernel.app, base);
const directory = (await client.request('GET', `${base}/acme/default/directory`)).json;
const created = await client.post(directory, directory.newAccount, { contact: ['mailto:web@example.com'] });
client.kid = created.headers.location as string;
const accountId = client.kid.split('/').pop()!;
const ordered = await client.post(directory, directory.newOrder, { identifiers: [{ type: 'dns', value: 'www.example.com' }] });
const orderId = (ordered.headers.location as string).split('/').pop()!;

t.test('access', async (t) => {
  const anonymous = caller(kernel, {});
  t.equal((await anonymous('GET', '/api/v1/acme/accounts/')).statusCode, 401, 'no credentials: 401');
  const reader = await createPrincipal(kernel, 'acme-reader', { permissions: [{ value: 'configuration:acme:read' }] });
  const other = await createPrincipal(kernel, 'pki-admin', { permissions: [{ value: 'configuration:pki:write' }] });
  t.equal((await caller(kernel, other.headers)('GET', '/api/v1/acme/orders/')).statusCode, 403, 'another section: 403');
  t.equal((await caller(kernel, reader.headers)('GET', '/api/v1/acme/orders/')).statusCode, 200, 'configuration:acme:read reads');
  t.equal((await caller(kernel, reader.headers)('POST', `/api/v1/acme/accounts/${accountId}/deactivate`)).statusCode, 403, 'read cannot deactivate');
  const wrongHost = await kernel.app.inject({ method: 'GET', url: '/api/v1/acme/accounts/', headers: { ...ADMIN_HEADERS, host: 'acme.example' } });
  t.equal(wrongHost.statusCode, 404, 'a host without the configuration capability: 404');
  const acmeOnHost = await kernel.app.inject({ method: 'GET', url: '/acme/default/directory', headers: { host: 'acme.example' } });
  t.equal(acmeOnHost.statusCode, 200, 'while the ACME directory answers there');
});

t.test('lists and filters', async (t) => {
  const accounts = (await admin('GET', '/api/v1/acme/accounts/')).json();
  t.match(accounts, { page: 1, pageSize: 50, hasMore: false });
  t.match(accounts.results, [{ _id: accountId, profile: 'default', status: 'valid', contact: ['mailto:web@example.com'] }]);
  t.equal((await admin('GET', '/api/v1/acme/accounts/?contact=nobody')).json().results.length, 0, 'a contact filter');
  t.equal((await admin('GET', '/api/v1/acme/accounts/?contact=web%40example')).json().results.length, 1, 'matching part of an address');
  t.equal((await admin('GET', '/api/v1/acme/accounts/?contact=web%25example')).json().results.length, 0, 'a % in the filter is a character, not a wildcard');
  const orders = (await admin('GET', '/api/v1/acme/orders/?identifier=www.example.com')).json();
  t.match(orders.results, [{ _id: orderId, account: accountId, status: 'pending', identifiers: [{ type: 'dns', value: 'www.example.com' }] }]);
  t.equal((await admin('GET', '/api/v1/acme/orders/?status=valid')).json().results.length, 0, 'a status filter');
  const bad = await admin('GET', '/api/v1/acme/orders/?pageSize=0');
  t.equal(bad.statusCode, 400, 'a bad page size: 400');
  t.equal(bad.headers['content-type'], 'application/problem+json');
  t.equal((await admin('GET', '/api/v1/acme/orders/?status=done')).statusCode, 400, 'an unknown status: 400');
});

t.test('revoke and deactivate', async (t) => {
  const notIssued = await admin('POST', `/api/v1/acme/orders/${orderId}/revoke`, {});
  t.equal(notIssued.statusCode, 409, 'an order without a certificate: 409');
  t.equal(notIssued.json().error, 'ACME-ADMIN-006');
  t.equal((await admin('POST', '/api/v1/acme/orders/nope/revoke', {})).statusCode, 404);
  t.equal((await admin('POST', '/api/v1/acme/accounts/nope/deactivate')).statusCode, 404);
  const done = await admin('POST', `/api/v1/acme/accounts/${accountId}/deactivate`);
  t.equal(done.json().status, 'deactivated');
  const refused = await client.post(directory, directory.newOrder, { identifiers: [{ type: 'dns', value: 'www.example.com' }] });
  t.equal(refused.status, 403, 'the deactivated account is refused');
  t.equal(refused.json.type, 'urn:ietf:params:acme:error:unauthorized');
});

t.test('EAB keys and policies', async (t) => {
  t.equal((await admin('POST', '/api/v1/acme/eab/keys/', { name: 'k1', hmacKey: 'A'.repeat(43), policy: 'missing' })).statusCode, 400, 'a key naming no policy is refused');
  t.equal((await admin('POST', '/api/v1/acme/eab/policies/', { name: 'p1', identifiers: ['*.example.com'] })).statusCode, 201);
  t.equal((await admin('POST', '/api/v1/acme/eab/keys/', { name: 'k1', hmacKey: 'short', policy: 'p1' })).statusCode, 400, 'a short HMAC key is refused');
  const key = await admin('POST', '/api/v1/acme/eab/keys/', { name: 'k1', hmacKey: 'A'.repeat(43), policy: 'p1' });
  t.equal(key.statusCode, 201);
  t.notMatch(key.body, /AAAAAAAA/, 'the HMAC key is never answered');
  const referenced = await admin('DELETE', '/api/v1/acme/eab/policies/p1');
  t.equal(referenced.json().error, 'EABPOLICY-005', 'a policy a key names is not deleted');
  t.same(referenced.json().referrers, ['acme-eab-key/k1'], 'the answer names the key');
  t.equal((await admin('POST', '/api/v1/acme/eab/keys/', { name: 'k2', hmacKey: 'A'.repeat(43), policy: 'p1', extra: true })).statusCode, 400, 'unknown fields are refused');
});
