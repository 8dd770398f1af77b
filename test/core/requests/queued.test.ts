/**
 * Queued issuance seen from the request workflow, with the fake PKI connector of test/fixtures (a scripted
 * test fake, not our code): a pending CA answer leaves the request approved with retryAt / retryCount until the
 * queue job completes it; a final refusal denies it with `error`. Answers validated against client-compat.
 * SQLite and, with TEST_DATABASE_URL, MariaDB.
 */
import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { buildCsr } from '../../../core/pki/csr/build.js';
import { ADMIN_HEADERS } from '../../helpers/kernel.js';
import { caller } from '../../helpers/security.js';
import { until } from '../../helpers/until.js';
import { compatErrors } from '../../helpers/client-compat-schemas.js';
import { bootFake, createConnector, createQueue, script, uniqueKey } from '../pki/connectors/helpers.js';

const csr = (cn: string): string => {
  const der = buildCsr(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey, { subject: `CN=${cn}` });
  return `-----BEGIN CERTIFICATE REQUEST-----\n${Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE REQUEST-----\n`;
};

t.test('pending at the CA: approved with retryAt, then completed by the queue; refused: denied with error', async (t) => {
  const kernel = await bootFake(t);
  const admin = caller(kernel, ADMIN_HEADERS);
  await createQueue(kernel, { name: 'fast', retries: 2, initialDelaySeconds: 1, maxDelaySeconds: 1 });
  const key = uniqueKey('requests-queued');
  await createConnector(kernel, { name: 'fake-slow', type: 'fake-ca', queue: 'fast', configuration: { key, retryAfterSeconds: 0.3 } });
  const res = await admin('POST', '/api/v1/certificate/profiles/', { name: 'slow', pkiConnector: 'fake-slow' });
  t.equal(res.statusCode, 201, res.body);

  script(key, 'pending', 'issued');
  const submitted = await admin('POST', '/api/v1/requests/submit', { module: 'webra', workflow: 'enroll', profile: 'slow', template: { csr: csr('queued.example.com') } });
  t.equal(submitted.statusCode, 201, submitted.body);
  const body = submitted.json();
  t.equal(compatErrors('request', body), '');
  t.equal(body.status, 'approved', 'queued: approved until the CA answers');
  t.type(body.retryAt, 'number');
  t.ok(body.retryCount >= 0);
  await until('the queue completes it', async () => (await admin('GET', `/api/v1/requests/${body._id}`)).json().status === 'completed', 20_000, 100);
  const done = (await admin('GET', `/api/v1/requests/${body._id}`)).json();
  t.equal(compatErrors('request', done), '');
  t.ok(done.certificate, 'with its certificate');
  t.notOk(done.retryAt, 'no retry left');

  script(key, 'rejected');
  const refused = await admin('POST', '/api/v1/requests/submit', { module: 'webra', workflow: 'enroll', profile: 'slow', template: { csr: csr('refused.example.com') } });
  t.equal(refused.statusCode, 201, refused.body);
  t.equal(refused.json().status, 'denied', 'a final refusal denies the request');
  t.match(refused.json().error, /refused/);
  t.equal(compatErrors('request', refused.json()), '');
});
