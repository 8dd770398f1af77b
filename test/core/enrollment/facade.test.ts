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
  t.equal(await facade.profile('est', 'default'), null, 'nor for another protocol');
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
