/**
 * connectors/acme-upstream through the whole product, against Debian's real `pebble` (no mocks): a PKI connector
 * of type acme-upstream created with POST /api/v1/pki/connectors/, a certificate profile bound to it, then a WebRA
 * decentralized enroll through POST /api/v1/requests/submit. The connector answers pending first (order created,
 * challenges accepted: PEBBLE_VA_ALWAYS_VALID), so the request is `approved` until the PKI queue job polls it to
 * `completed`; the certificate is then in the inventory with metadata pki_connector. A revoke through
 * /requests/submit reaches pebble (its management API reports the certificate revoked with the reason).
 * Runs on SQLite and, with TEST_DATABASE_URL, on MariaDB.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ADMIN_HEADERS, bootKernel, tempDir } from '../../helpers/kernel.js';
import { until } from '../../helpers/until.js';
import { pebbleInstalled, startPebble } from './pebble.js';

interface RequestAnswer {
  _id: string;
  status: string;
  workflow: string;
  profile: string | null;
  certificateId?: string;
  certificate?: { _id: string; certificate: string; profile?: string; metadata: { key: string; value: string }[] } | null;
  retryAt?: number;
  retryCount?: number;
  error?: string;
}

if (!pebbleInstalled()) {
  // CI installs it (.ci/run); elsewhere: apt-get install -y pebble.
  if (process.env.CI) t.fail('pebble is not installed (apt-get install -y pebble)');
  else t.test('acme-upstream through /api/v1/requests', { skip: 'pebble is not installed (apt-get install -y pebble)' }, () => {});
} else {
  // External Account Binding required: the connector's eab.hmacKey is an x-secret field, so the configuration API's
  // sealing and masking are on the path of every enrollment below.
  const eabKey = randomBytes(32).toString('base64url');
  const pebble = await startPebble(t, { config: { externalAccountBindingRequired: true, externalAccountMACKeys: { 'kid-1': eabKey } } });
  // A short queue poll: the request waits for the PKI queue job after the connector's first "pending".
  const kernel = await bootKernel(t, { pki: { queue: { pollEveryMs: 200 } } });
  const api = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) => {
    const res = await kernel.app.inject({ method, url, headers: { ...ADMIN_HEADERS }, ...(payload === undefined ? {} : { payload: payload as object }) });
    return { status: res.statusCode, body: res.body, json: <T = Record<string, unknown>>() => JSON.parse(res.body) as T };
  };
  const describe = (r: { status: number; body: string }) => `${r.status}: ${r.body.slice(0, 800)}`;

  const dir = tempDir(t, 'cw-acme-requests-');
  const name = 'www.acme-requests.example';
  execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', `/CN=${name}`, '-addext', `subjectAltName=DNS:${name}`], { cwd: dir, stdio: 'ignore' });
  const csr = readFileSync(join(dir, 'leaf.csr'), 'utf8');

  let certificateId: string | undefined;
  let certificatePem: string | undefined;

  await t.test('a PKI queue, an acme-upstream connector and a profile, through the configuration API', async (t) => {
    // Retries soon: the connector answers pending with retryAfterSeconds 1, the queue retries after 1 s.
    const queue = await api('POST', '/api/v1/pki/queues/', { name: 'acme', retries: 30, initialDelaySeconds: 1, maxDelaySeconds: 2 });
    t.equal(queue.status, 201, describe(queue));
    const created = await api('POST', '/api/v1/pki/connectors/', {
      name: 'pebble',
      type: 'acme-upstream',
      description: 'Debian pebble started by the test',
      queue: 'acme',
      configuration: { directoryUrl: pebble.directoryUrl, caBundlePem: pebble.tlsCaPem, contactEmail: 'pki@example.com', retryAfterSeconds: 1, eab: { kid: 'kid-1', hmacKey: eabKey } },
    });
    t.equal(created.status, 201, describe(created));
    t.match(created.json(), { name: 'pebble', type: 'acme-upstream', enabled: true, queue: 'acme', configuration: { directoryUrl: pebble.directoryUrl, eab: { kid: 'kid-1', hmacKey: '********' } } });
    t.notMatch(created.body, eabKey, 'the EAB key is never answered');
    const connect = await api('PATCH', '/api/v1/pki/connectors/connect', { name: 'pebble' });
    t.equal(connect.status, 200, describe(connect));
    t.match(connect.json(), { ok: true }, 'testConnection reaches the ACME directory');

    // The optional eab object left out: accepted as it is (no `eab: {}` made up for its secret field).
    const plain = await api('POST', '/api/v1/pki/connectors/', { name: 'pebble-no-eab', type: 'acme-upstream', configuration: { directoryUrl: pebble.directoryUrl, caBundlePem: pebble.tlsCaPem } });
    t.equal(plain.status, 201, describe(plain));
    t.notMatch(plain.json(), { configuration: { eab: {} } }, 'no eab object in the stored configuration');

    const profile = await api('POST', '/api/v1/certificate/profiles/', {
      name: 'acme-tls',
      pkiConnector: 'pebble',
      subject: [{ element: 'cn.1', mandatory: true, editable: true }],
      sans: [{ type: 'DNSNAME', editable: true, min: 1, max: 5 }],
    });
    t.equal(profile.status, 201, describe(profile));
    t.match(profile.json(), { name: 'acme-tls', pkiConnector: 'pebble', module: 'webra', enabled: true });
  });

  await t.test('a decentralized enroll completes through pebble: the certificate is in the inventory with pki_connector', async (t) => {
    const submitted = await api('POST', '/api/v1/requests/submit', {
      module: 'webra',
      workflow: 'enroll',
      profile: 'acme-tls',
      template: { csr, subject: [{ element: 'cn.1', value: name }], sans: [{ type: 'DNSNAME', value: [name] }] },
    });
    t.ok(submitted.status === 200 || submitted.status === 201, describe(submitted));
    let request = submitted.json<RequestAnswer>();
    t.ok(['approved', 'completed'].includes(request.status), `approved (queued at the CA) or completed: ${describe(submitted)}`);
    t.comment(`the submit answered ${request.status}${request.status === 'approved' ? ' (pending at the CA): the PKI queue job completes it' : ''}`);
    if (request.status === 'approved') {
      t.type(request.retryAt, 'number', 'a queued request says when it is retried');
      await until(
        'the request to complete through the PKI queue',
        async () => {
          const got = await api('GET', `/api/v1/requests/${request._id}`);
          request = got.json<RequestAnswer>();
          if (!['approved', 'completed'].includes(request.status)) throw new Error(`the request went ${describe(got)}`);
          return request.status === 'completed';
        },
        45_000,
        100,
      );
    }
    t.equal(request.status, 'completed');
    t.type(request.certificateId, 'string', 'certificateId');
    certificateId = request.certificateId;
    if (!certificateId) return;

    const stored = await api('GET', `/api/v1/certificates/${certificateId}`);
    t.equal(stored.status, 200, describe(stored));
    const cert = stored.json<{ certificate: { certificate: string; profile: string; module: string; revoked: boolean; metadata: { key: string; value: string }[]; subjectAlternateNames: { sanType: string; value: string }[] } }>().certificate;
    certificatePem = cert.certificate;
    t.match(cert, { profile: 'acme-tls', module: 'webra', revoked: false, subjectAlternateNames: [{ sanType: 'DNSNAME', value: name }] });
    t.match(cert.metadata, [{ key: 'pki_connector', value: 'pebble' }], 'metadata pki_connector = the connector');
    const x509 = new X509Certificate(certificatePem);
    const intermediate = await pebble.management('/intermediates/0');
    t.ok(x509.verify(new X509Certificate(intermediate.body).publicKey), "issued by pebble's intermediate");
    const serial = x509.serialNumber.toLowerCase().replace(/^0+/, '');
    t.match(JSON.parse((await pebble.management(`/cert-status-by-serial/${serial}`)).body), { Status: 'Valid' }, 'pebble knows it, valid');
  });

  await t.test('revoke through /requests/submit: pebble reports the certificate revoked', async (t) => {
    t.ok(certificateId && certificatePem, 'a certificate was enrolled above');
    if (!certificateId || !certificatePem) return;
    const revoked = await api('POST', '/api/v1/requests/submit', { workflow: 'revoke', certificateId, template: { revocationReason: 'superseded' } });
    t.ok(revoked.status === 200 || revoked.status === 201, describe(revoked));
    let request = revoked.json<RequestAnswer>();
    t.match(request, { workflow: 'revoke' });
    if (request.status === 'approved') {
      await until('the revocation to complete through the PKI queue', async () => {
        request = (await api('GET', `/api/v1/requests/${request._id}`)).json<RequestAnswer>();
        return request.status === 'completed';
      }, 30_000, 100);
    }
    t.equal(request.status, 'completed', describe(revoked));
    const serial = new X509Certificate(certificatePem).serialNumber.toLowerCase().replace(/^0+/, '');
    t.match(JSON.parse((await pebble.management(`/cert-status-by-serial/${serial}`)).body), { Status: 'Revoked', Reason: 4 }, 'pebble: revoked, superseded');
    const stored = await api('GET', `/api/v1/certificates/${certificateId}`);
    t.match(stored.json(), { certificate: { revoked: true } }, 'the inventory has it revoked');
    const again = await api('POST', '/api/v1/requests/submit', { workflow: 'revoke', certificateId, template: { revocationReason: 'superseded' } });
    t.match(again.json(), { error: 'WEBRA-REVOKE-005' }, 'revoking again: WEBRA-REVOKE-005');
  });
}
