/**
 * ctx.enrollment, the facade protocol plugins enroll through: a profile is offered to a protocol only when
 * the protocol is enabled on it; an enroll is a request of the workflow with the protocol's requester (events,
 * inventory), refused with the workflow's code when the CSR breaks the profile; a profile whose protocol
 * settings say requireApproval leaves the request pending; revocation; a one-time WebRA challenge is spent once.
 * Runs on SQLite and MariaDB.
 */
import type { EnrollmentFacade } from '@certwright/sdk';
import t from 'tap';
import { csrFor } from '../../helpers/csr.js';
import { bootKernel, ENROLLMENT_BOOTSTRAP } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller } from '../../helpers/security.js';

const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);
const facade = kernel.container.resolve('enrollmentFacade') as EnrollmentFacade;
const admin = caller(kernel, ADMIN_HEADERS);
for (const body of [
  { name: 'plain', pkiConnector: 'local-ca' },
  { name: 'gated', pkiConnector: 'local-ca', protocols: { est: { enabled: true, requireApproval: true } } },
  { name: 'chal', pkiConnector: 'local-ca', authorizationMode: 'challenge' },
]) {
  const res = await admin('POST', '/api/v1/certificate/profiles/', body);
  if (res.statusCode !== 201) throw new Error(res.body);
}

t.test('profiles by protocol', async (t) => {
  t.match(await facade.profile('acme', 'default'), { name: 'default', settings: { enabled: true } }, 'ACME is on for default (first start)');
  t.equal(await facade.profile('acme', 'plain'), null, 'not on a profile without it');
  t.equal(await facade.profile('mdm', 'default'), null, 'nor for a protocol the profile does not enable');
  t.match(await facade.profile('est', 'default'), { settings: { enabled: true } }, 'EST is on for default too (first start)');
  t.equal(await facade.profile('acme', 'missing'), null, 'nor on a missing profile');
});

t.test('enroll and revoke through the workflow', async (t) => {
  const issued = await facade.enroll({ protocol: 'acme', profile: 'default', csrPem: csrFor('one.example.com', ['one.example.com']), requester: 'acme:test-account' });
  if ('refused' in issued) throw new Error(issued.message);
  t.equal(issued.status, 'completed');
  t.match(issued.certificatePem, /BEGIN CERTIFICATE/);
  t.ok(issued.chainPem!.length >= 1, 'with the CA chain');
  const request = (await admin('GET', `/api/v1/requests/${issued.requestId}`)).json();
  t.match(request, { module: 'acme', workflow: 'enroll', requester: 'acme:test-account', status: 'completed' }, 'a request of the workflow, the protocol its module');
  t.match(await facade.certificate(issued.certificatePem!), { profile: 'default', revoked: false });
  const refused = await facade.enroll({ protocol: 'acme', profile: 'default', csrPem: csrFor('two.example.com', ['a.example.com', 'b.example.com', 'c.example.com', 'd.example.com', 'e.example.com', 'f.example.com', 'g.example.com', 'h.example.com', 'i.example.com', 'j.example.com', 'k.example.com']), requester: 'acme:test-account' });
  t.match(refused, { refused: true, code: 'PRF-012' }, "a CSR the profile refuses: the workflow's code");
  t.match(await facade.enroll({ protocol: 'acme', profile: 'plain', csrPem: csrFor('x.example.com'), requester: 'acme:x' }), { refused: true, code: 'PRF-003' }, 'a profile without the protocol');
  const revoked = await facade.revoke({ protocol: 'acme', certificatePem: issued.certificatePem!, requester: 'acme:test-account', reason: 'superseded' });
  t.match(revoked, { status: 'completed' });
  t.match(await facade.certificate(issued.certificatePem!), { revoked: true });
  t.match(await facade.revoke({ protocol: 'acme', certificatePem: issued.certificatePem!, requester: 'acme:test-account' }), { refused: true, code: 'WEBRA-REVOKE-005' }, 'revoked twice: refused');
});

t.test('requireApproval: the request waits for an approver', async (t) => {
  const pending = await facade.enroll({ protocol: 'est', profile: 'gated', csrPem: csrFor('gated.example.com', ['gated.example.com']), requester: 'est:device-1' });
  if ('refused' in pending) throw new Error(pending.message);
  t.equal(pending.status, 'pending');
  t.notOk(pending.certificatePem);
  const approved = await admin('POST', '/api/v1/requests/approve', { _id: pending.requestId });
  t.equal(approved.statusCode, 200, approved.body);
  t.match(await facade.request(pending.requestId), { status: 'completed', certificatePem: /BEGIN CERTIFICATE/ }, 'issued once approved');
  t.equal(await facade.request('000000000000000000000000'), null);
});

t.test('a one-time challenge is consumed once', async (t) => {
  const submitted = (await admin('POST', '/api/v1/requests/submit', { module: 'webra', workflow: 'enroll', profile: 'chal', template: {} })).json();
  const challenge = submitted.password.value as string;
  const spent = await facade.consumeChallenge(challenge, csrFor('chal.example.com', ['chal.example.com']));
  t.match(spent, { status: 'completed', certificatePem: /BEGIN CERTIFICATE/ });
  t.match(await facade.consumeChallenge(challenge, csrFor('chal.example.com')), { refused: true, code: 'CHAL-007' }, 'spent: refused');
  t.match(await facade.consumeChallenge('wrong', csrFor('chal.example.com')), { refused: true, code: 'CHAL-003' });
});

t.test('SDK 1.9: service certificates skip approval, protocol challenges, scoped consumption, lookup by serial, renew', async (t) => {
  const service = await facade.enroll({ protocol: 'est', profile: 'gated', csrPem: csrFor('ra.example.com'), requester: 'est:service', service: true });
  t.match(service, { status: 'completed', certificatePem: /BEGIN CERTIFICATE/ }, 'a service certificate does not wait for an approver');
  const issued = await facade.newChallenge({ protocol: 'est', profile: 'gated', requester: 'est:admin-page' });
  if ('refused' in issued) throw new Error(issued.message);
  t.ok(issued.challenge.length >= 16 && issued.expiresAt > Date.now(), 'a challenge with its expiry');
  t.match((await admin('GET', `/api/v1/requests/${issued.requestId}`)).json(), { module: 'est', status: 'approved', requester: 'est:admin-page' }, 'an approved challenge request');
  t.match(await facade.newChallenge({ protocol: 'scep', profile: 'gated', requester: 'x' }), { refused: true, code: 'PRF-003' }, 'not for a protocol the profile does not serve');
  t.match(await facade.consumeChallenge(issued.challenge, csrFor('c1.example.com'), 'default', { protocol: 'scep', profile: 'gated' }), { refused: true, code: 'CHAL-003' }, 'another protocol cannot spend it');
  t.match(await facade.consumeChallenge(issued.challenge, csrFor('c1.example.com')), { refused: true, code: 'CHAL-003' }, 'nor the WebRA challenge API');
  const spent = await facade.consumeChallenge(issued.challenge, csrFor('c1.example.com'), 'default', { protocol: 'est', profile: 'gated' });
  t.match(spent, { status: 'completed', certificatePem: /BEGIN CERTIFICATE/ }, 'its protocol on its profile spends it');
  if ('refused' in spent || !spent.certificatePem) throw new Error('not issued');
  const { X509Certificate } = await import('node:crypto');
  const serial = new X509Certificate(spent.certificatePem).serialNumber;
  t.match(await facade.certificateBySerial(serial), [{ certificatePem: spent.certificatePem, profile: 'gated', revoked: false }], 'found by its serial');
  t.same(await facade.certificateBySerial('00' + serial.toLowerCase()), await facade.certificateBySerial(serial), 'leading zero bytes and case do not matter');
  t.same(await facade.certificateBySerial('not-hex'), []);
  const renewed = await facade.renew({ protocol: 'est', certificatePem: spent.certificatePem, csrPem: csrFor('c1.example.com'), requester: 'est:device' });
  t.match(renewed, { status: 'pending' }, 'a renewal on a profile that needs approval waits');
  t.match(await facade.renew({ protocol: 'acme', certificatePem: spent.certificatePem, csrPem: csrFor('c1.example.com'), requester: 'x' }), { refused: true, code: 'PRF-003' }, 'not through a protocol the profile does not serve');
});
