import t from 'tap';
import type { TriggerChannel } from '@certwright/sdk';
import { bootKernel } from '../helpers/kernel.js';
import { sampleEvent } from '../fixtures/channels/event.js';
import { SMTP_PASSWORD, SMTP_USER, startSmtpSink } from '../fixtures/channels/smtp.js';

t.test('email channel against a real SMTP server (smtp-server on loopback)', async (t) => {
  const smtp = await startSmtpSink(t);
  const server = (port: number, extra: Record<string, unknown> = {}) => ({
    host: '127.0.0.1',
    port,
    starttls: 'never',
    user: SMTP_USER,
    password: SMTP_PASSWORD,
    from: 'Certwright <certwright@example.org>',
    connectionTimeoutMs: 3000,
    greetingTimeoutMs: 3000,
    socketTimeoutMs: 5000,
    ...extra,
  });
  const kernel = await bootKernel(t, {
    plugins: {
      instances: {
        'trigger-email': [
          { name: 'main', config: server(smtp.port) },
          { name: 'wrong-password', config: server(smtp.port, { password: 'not-the-password' }) },
          { name: 'closed', config: server(1) },
          { name: 'needs-tls', config: server(smtp.port, { starttls: 'required' }) },
        ],
      },
    },
  });
  t.equal(kernel.plugins.records.find((r) => r.id === 'trigger-email')?.state, 'active');
  const email = kernel.provided.triggerChannels.get('email') as TriggerChannel<object>;
  t.ok(email, 'the email channel is registered');
  const event = sampleEvent();

  t.test('validateTarget', async (t) => {
    t.ok(email.validateTarget({ to: ['ops@example.org'] }));
    t.ok(email.validateTarget({ server: 'main', to: ['{{certificate.contactEmail}}'], cc: ['a@example.org'], subject: '{{code}}', body: 'x', html: '<b>{{code}}</b>' }));
    t.notOk(email.validateTarget({ to: [] }), 'at least one recipient');
    t.notOk(email.validateTarget({ to: ['ops@example.org'], server: 'nope' }), 'unknown SMTP instance');
    t.notOk(email.validateTarget({ to: ['ops@example.org'], subject: '{{#certificate}}unclosed' }), 'a template that does not parse');
  });

  t.test('the delivered message: from, to, cc, subject and body rendered from the event', async (t) => {
    const result = await email.send(event, {
      to: ['{{certificate.contactEmail}}', 'pki-team@example.org'],
      cc: ['audit@example.org'],
      subject: '[{{trigger.name}}] {{certificate.commonName}} expires in {{trigger.thresholdDays}} days',
      body: 'Certificate {{certificate.dn}} (serial {{certificate.serial}}) expires on {{certificate.notAfterIso}}.\nEvent {{code}}.',
      html: '<p>{{certificate.dn}} &mdash; {{trigger.name}}</p>',
    });
    t.match(result, { delivered: true, retryable: false });
    t.equal(smtp.delivered.length, 1);
    const mail = smtp.delivered[0]!;
    t.equal(mail.user, SMTP_USER, 'authenticated with the instance credentials');
    t.same(mail.envelope, { from: 'certwright@example.org', to: ['owner@example.com', 'pki-team@example.org', 'audit@example.org'] });
    t.match(mail.parsed.from?.value, [{ address: 'certwright@example.org', name: 'Certwright' }]);
    t.same(
      (Array.isArray(mail.parsed.to) ? mail.parsed.to : [mail.parsed.to]).flatMap((a) => a!.value.map((v) => v.address)),
      ['owner@example.com', 'pki-team@example.org'],
    );
    t.same((Array.isArray(mail.parsed.cc) ? mail.parsed.cc : [mail.parsed.cc]).flatMap((a) => a!.value.map((v) => v.address)), ['audit@example.org']);
    t.equal(mail.parsed.subject, '[expiry-30] www.example.com expires in 30 days');
    t.equal(
      mail.parsed.text?.trim(),
      `Certificate CN=www.example.com, O=Example Corp, C=FR (serial 0a1b2c3d) expires on ${new Date(event.certificate!.notAfter).toISOString()}.\nEvent CERTIFICATE-EXPIRING.`,
    );
    t.equal(mail.parsed.html && String(mail.parsed.html).trim(), '<p>CN=www.example.com, O=Example Corp, C=FR &mdash; expiry-30</p>');
    t.equal(mail.parsed.headers.get('x-certwright-event'), 'CERTIFICATE-EXPIRING');
  });

  t.test('defaults: the event title as subject and its facts as body', async (t) => {
    const result = await email.send(event, { to: ['ops@example.org'] });
    t.ok(result.delivered);
    const mail = smtp.delivered.at(-1)!;
    t.equal(mail.parsed.subject, 'Certificate expires in 30 days: www.example.com');
    t.match(mail.parsed.text, /Subject: CN=www\.example\.com, O=Example Corp, C=FR\nSerial: 0a1b2c3d\n/);
    t.match(mail.parsed.text, /Trigger: expiry-30/);
  });

  t.test('templates cannot inject headers or run code; HTML values are escaped', async (t) => {
    const hostile = sampleEvent({
      certificate: { ...event.certificate!, dn: 'CN=x\r\nBcc: victim@example.org', owner: '<script>alert(1)</script>' },
    });
    const result = await email.send(hostile, { to: ['ops@example.org'], subject: '{{certificate.dn}}', html: '<p>{{certificate.owner}}</p>' });
    t.ok(result.delivered);
    const mail = smtp.delivered.at(-1)!;
    t.same(mail.envelope.to, ['ops@example.org'], 'no extra recipient');
    t.equal(mail.parsed.subject, 'CN=x Bcc: victim@example.org');
    t.equal(String(mail.parsed.html).trim(), '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>');
  });

  t.test('recipients that render to nothing, or to something else than an address, fail for good', async (t) => {
    const before = smtp.delivered.length;
    t.match(await email.send(sampleEvent({ certificate: { ...event.certificate!, contactEmail: null } }), { to: ['{{certificate.contactEmail}}'] }), {
      delivered: false,
      retryable: false,
      detail: /no recipient/,
    });
    t.match(await email.send(sampleEvent({ certificate: { ...event.certificate!, contactEmail: 'not an address' } }), { to: ['{{certificate.contactEmail}}'] }), {
      delivered: false,
      retryable: false,
      detail: /not an email address/,
    });
    t.equal(smtp.delivered.length, before);
  });

  t.test('SMTP answers: 451 retryable, 550 permanent', async (t) => {
    smtp.answerData({ code: 451, message: 'Requested action aborted: local error' });
    t.match(await email.send(event, { to: ['ops@example.org'] }), { delivered: false, retryable: true, detail: /^SMTP 451 .*Requested action aborted/ });
    smtp.answerData({ code: 550, message: 'Mailbox unavailable' });
    t.match(await email.send(event, { to: ['ops@example.org'] }), { delivered: false, retryable: false, detail: /^SMTP 550 .*Mailbox unavailable/ });
    smtp.answerData(null);
    t.match(await email.send(event, { to: ['ops@example.org'] }), { delivered: true });
  });

  t.test('server-side failures: bad credentials and TLS policy are final, a closed port is retried', async (t) => {
    const wrong = await email.send(event, { server: 'wrong-password', to: ['ops@example.org'] });
    t.match(wrong, { delivered: false, retryable: false, detail: /535|auth/i });
    t.notMatch(wrong.detail, /not-the-password/, 'the password is not in the detail');
    t.match(await email.send(event, { server: 'closed', to: ['ops@example.org'] }), { delivered: false, retryable: true, detail: /ECONNECTION|ECONNREFUSED/ });
    t.match(await email.send(event, { server: 'needs-tls', to: ['ops@example.org'] }), { delivered: false, retryable: false, detail: /SMTP 500 \(ETLS\): Error upgrading connection with STARTTLS/ });
  });

  t.test('preview', async (t) => {
    t.match(email.preview!(event), /^Subject: Certificate expires in 30 days: www\.example\.com\n\nCertificate expires/);
  });
});
