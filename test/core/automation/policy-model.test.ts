/** The automation policy's rules as pure functions: when a certificate is due, compliance, retry backoff. */
import t from 'tap';
import { ariSuggestedWindow } from '@certwright/sdk';
import { complianceProblem, renewalCause, renewalDueAt, retryDelayMs, type AutomationPolicy } from '../../../core/automation/policies/model.js';

const DAY = 86_400_000;
const notBefore = Date.UTC(2027, 0, 1);
const cert = { _id: '0123456789abcdef01234567', notBefore, notAfter: notBefore + 90 * DAY, revoked: false, signingAlgorithm: 'SHA256WITHECDSA', issuer: 'CN=Issuing CA' };
const policy = (over: Partial<AutomationPolicy> = {}): AutomationPolicy => ({
  name: 'p',
  profile: 'web',
  renewal: { mode: 'daysBeforeExpiry', daysBeforeExpiry: 30 },
  renewOn: ['expiry'],
  revokeSupersededAfterDays: null,
  expireRequestsAfterDays: null,
  requireApproval: false,
  retries: { max: 5, backoffMinutes: 60 },
  ...over,
});

t.test('the renewal window opens as the mode says', async (t) => {
  t.equal(renewalDueAt(policy(), cert), notBefore + 60 * DAY, '30 days before expiry');
  t.equal(renewalDueAt(policy({ renewal: { mode: 'lifetimeShare', lifetimeShare: 0.25 } }), cert), notBefore + 67.5 * DAY, 'when a quarter of 90 days remains');
  t.equal(renewalDueAt(policy({ renewal: { mode: 'lifetimeShare' } }), cert), notBefore + 60 * DAY, 'a third by default');
  const window = ariSuggestedWindow(cert.notBefore, cert.notAfter);
  t.same(window, { start: notBefore + 60 * DAY, end: notBefore + 75 * DAY }, 'the ARI window: 2/3 to 5/6 of the lifetime');
  const ari = renewalDueAt(policy({ renewal: { mode: 'ari' } }), cert);
  t.ok(ari >= window.start && ari <= window.end, 'ari: inside the window');
  t.equal(renewalDueAt(policy({ renewal: { mode: 'ari' } }), cert), ari, 'the same point on every node (derived from the id)');
  const spread = new Set(['a', 'b', 'c', 'd', 'e', 'f'].map((c) => renewalDueAt(policy({ renewal: { mode: 'ari' } }), { ...cert, _id: c.repeat(24) })));
  t.ok(spread.size >= 5, 'different certificates get different points in the window');
});

t.test('what prompts a renewal', async (t) => {
  t.equal(renewalCause(policy(), cert, notBefore + 59 * DAY), null, 'before the window: nothing');
  t.equal(renewalCause(policy(), cert, notBefore + 60 * DAY), 'expiry', 'in the window: expiry');
  t.equal(renewalCause(policy(), { ...cert, revoked: true }, notBefore + 61 * DAY), null, 'revoked, and revocation not asked for: nothing');
  t.equal(renewalCause(policy({ renewOn: ['expiry', 'revocation'] }), { ...cert, revoked: true }, notBefore), 'revocation', 'revoked: replaced');
  const strict = policy({ renewOn: ['noncompliance'], compliancePolicy: { authorizedSigningAlgorithms: ['SHA384WITHECDSA'], authorizedCas: null } });
  t.equal(renewalCause(strict, cert, notBefore), 'noncompliance', 'a signing algorithm outside the list');
  t.equal(renewalCause(strict, cert, notBefore + 80 * DAY), 'noncompliance', 'expiry not asked for: the cause is the compliance');
});

t.test('compliance rules', async (t) => {
  t.equal(complianceProblem(policy(), cert), null, 'no rules: compliant');
  t.equal(complianceProblem(policy({ compliancePolicy: { authorizedSigningAlgorithms: ['sha256withecdsa'] } }), cert), null, 'algorithm names compare case-insensitively');
  t.match(complianceProblem(policy({ compliancePolicy: { authorizedCas: ['CN=Other CA'] } }), cert), /issuer CN=Issuing CA is not an authorized CA/);
  t.equal(complianceProblem(policy({ compliancePolicy: { authorizedCas: ['CN=Issuing CA'], authorizedSigningAlgorithms: [] } }), cert), null, 'an empty list allows all');
});

t.test('retries back off, doubling, at most a week', async (t) => {
  const p = policy({ retries: { max: 20, backoffMinutes: 30 } });
  t.same([1, 2, 3, 4].map((n) => retryDelayMs(p, n) / 60_000), [30, 60, 120, 240]);
  t.equal(retryDelayMs(p, 20), 7 * DAY, 'capped');
});
