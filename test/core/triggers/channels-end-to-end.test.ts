import { createHmac } from 'node:crypto';
import t from 'tap';
import { startReceiver } from '../../fixtures/channels/receiver.js';
import { SMTP_PASSWORD, SMTP_USER, startSmtpSink } from '../../fixtures/channels/smtp.js';
import { ADMIN_HEADERS } from '../../helpers/kernel.js';
import { until } from '../../helpers/until.js';
import { bootTriggers, createTrigger, importCertificate } from './fixture.js';

const WEBHOOK_SECRET = 'end-to-end-webhook-secret';

/**
 * The whole path with the shipped channels and nothing driven by hand: a certificate imported through
 * the API → CERTIFICATE-IMPORTED in the event store → the dispatcher and delivery jobs (Agenda) → a
 * signed webhook POST to a local receiver and a mail through a real SMTP server (smtp-server) → both
 * outcomes written on the certificate's triggerResults.
 */
t.test('an imported certificate reaches a webhook and a mailbox through triggers', async (t) => {
  const receiver = await startReceiver(t);
  const smtp = await startSmtpSink(t);
  const { kernel } = await bootTriggers(t, {
    plugins: {
      instances: {
        'trigger-webhook': [{ name: 'default', config: { allowHttp: true, allowPrivateNetworks: true } }],
        'trigger-email': [{ name: 'local', config: { host: '127.0.0.1', port: smtp.port, starttls: 'never', user: SMTP_USER, password: SMTP_PASSWORD, from: 'certwright@example.com' } }],
      },
    },
  });
  await createTrigger(kernel, { name: 'hook', channel: 'webhook', target: { url: `${receiver.base}/hook`, secret: WEBHOOK_SECRET }, events: ['imported'] });
  await createTrigger(kernel, {
    name: 'mail',
    channel: 'email',
    target: { to: ['{{certificate.contactEmail}}'], subject: 'Imported: {{certificate.dn}}', body: 'Certificate {{certificate.serial}} expires {{certificate.notAfterIso}}.' },
    events: ['imported'],
    query: 'team equals "web"',
  });

  const web = await importCertificate(kernel, 'shop', { team: 'web', contactEmail: 'web-team@example.com' });
  const other = await importCertificate(kernel, 'intranet', { team: 'it', contactEmail: 'it@example.com' });

  await until('the webhook calls and the mail', () => receiver.received.length >= 2 && smtp.delivered.length >= 1, 20_000);
  // The webhook heard of both certificates, each signed over "<timestamp>.<body>".
  const bodies = receiver.received.map((r) => {
    const expected = createHmac('sha256', WEBHOOK_SECRET).update(`${r.headers['x-certwright-timestamp']}.${r.body}`).digest('hex');
    t.equal(r.headers['x-certwright-signature'], `sha256=${expected}`, 'the signature verifies with the trigger secret');
    t.equal(r.headers['x-certwright-event'], 'CERTIFICATE-IMPORTED');
    return JSON.parse(r.body) as { code: string; certificate: { _id: string; dn: string }; trigger: { name: string; event: string } };
  });
  t.same(bodies.map((b) => b.certificate._id).sort(), [web._id, other._id].sort());
  t.same(bodies[0]!.trigger, { name: 'hook', event: 'imported' });

  // The mail trigger's query admits the web team's certificate only.
  t.equal(smtp.delivered.length, 1, 'one mail');
  const mail = smtp.delivered[0]!;
  t.same(mail.envelope.to, ['web-team@example.com'], 'to the address the template named');
  t.equal(mail.parsed.subject, `Imported: ${web.dn}`);
  t.match(mail.parsed.text ?? '', new RegExp(`Certificate ${web.serial} expires \\d{4}-\\d{2}-\\d{2}T`));

  // Both outcomes are on the certificate, as GET and HCQL show them.
  // The receivers have their requests a moment before the outcomes are written: wait for the outcomes.
  const resultsOf = async (id: string): Promise<number> => {
    const got = await kernel.app.inject({ method: 'GET', url: `/api/v1/certificates/${id}`, headers: ADMIN_HEADERS });
    return ((got.json() as { certificate: { triggerResults?: unknown[] } }).certificate.triggerResults ?? []).length;
  };
  await until('the trigger results of both certificates', async () => (await resultsOf(web._id)) === 2 && (await resultsOf(other._id)) === 1, 10_000);
  const got = await kernel.app.inject({ method: 'GET', url: `/api/v1/certificates/${web._id}`, headers: ADMIN_HEADERS });
  const results = (got.json() as { certificate: { triggerResults: { name: string; event: string; triggerType: string; status: string; lastExecutionDate: number }[] } }).certificate.triggerResults;
  t.same(
    results.map((r) => `${r.name} ${r.event} ${r.triggerType} ${r.status}`).sort(),
    ['hook imported notification success', 'mail imported notification success'],
  );
  const search = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/search', headers: ADMIN_HEADERS, payload: { query: 'trigger.results has success', fields: ['dn'] } });
  t.same((search.json() as { results: { _id: string }[] }).results.map((r) => r._id).sort(), [web._id, other._id].sort(), 'searchable by outcome');
});
