import { createHmac, timingSafeEqual } from 'node:crypto';
import { resolve } from 'node:path';
import t from 'tap';
import type { DeliveryResult, TriggerChannel } from '@certwright/sdk';
import { validatePluginFolder } from '../../core/plugins/validate-folder.js';
import { bootKernel } from '../helpers/kernel.js';
import { sampleEvent } from '../fixtures/channels/event.js';
import { startReceiver, type ReceivedRequest } from '../fixtures/channels/receiver.js';

const SECRET = 'whsec-0123456789abcdef';

/** What a receiver does to trust a delivery: HMAC of "<timestamp>.<raw body>" with the shared secret. */
function verifies(req: ReceivedRequest, secret: string): boolean {
  const timestamp = req.headers['x-certwright-timestamp'] as string;
  const given = Buffer.from(String(req.headers['x-certwright-signature']));
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.${req.body}`).digest('hex')}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

t.test('webhook channel: signed JSON POSTs to a local receiver, through the real plugin manager', async (t) => {
  const receiver = await startReceiver(t);
  // The receiver is on loopback over http: this instance's egress policy allows both.
  const kernel = await bootKernel(t, {
    plugins: { instances: { 'trigger-webhook': [{ name: 'default', config: { allowHttp: true, allowPrivateNetworks: true, timeoutMs: 5000 } }] } },
  });
  t.equal(kernel.plugins.records.find((r) => r.id === 'trigger-webhook')?.state, 'active');
  const webhook = kernel.provided.triggerChannels.get('webhook') as TriggerChannel<object>;
  t.ok(webhook, 'the webhook channel is registered');
  const url = `${receiver.base}/hooks/certwright?x=1`;
  const event = sampleEvent();

  t.test('validateTarget', async (t) => {
    t.ok(webhook.validateTarget({ url, secret: SECRET }));
    t.ok(webhook.validateTarget({ url, secret: SECRET, headers: { Authorization: 'Bearer abc' }, timeoutMs: 2000 }));
    t.notOk(webhook.validateTarget({ url: 'ftp://example.com/x', secret: SECRET }), 'not http(s)');
    t.notOk(webhook.validateTarget({ url: 'not a url', secret: SECRET }));
    t.notOk(webhook.validateTarget({ url }), 'a secret is required');
    t.notOk(webhook.validateTarget({ url, secret: SECRET, headers: { 'Content-Type': 'text/plain' } }), 'no overriding the content type');
    t.notOk(webhook.validateTarget({ url, secret: SECRET, headers: { 'X-Certwright-Signature': 'sha256=00' } }), 'no overriding the signature');
    t.notOk(webhook.validateTarget({ url, secret: SECRET, headers: { 'X-Note': 'a\r\nX-Evil: 1' } }), 'no header injection');
    t.notOk(webhook.validateTarget({ url, secret: SECRET, headers: { 'bad name': 'x' } }));
  });

  t.test('delivery: the documented body, headers and a signature the receiver verifies', async (t) => {
    const result = await webhook.send(event, { url, secret: SECRET, headers: { Authorization: 'Bearer abc' } });
    t.match(result, { delivered: true, retryable: false });
    t.equal(receiver.received.length, 1);
    const req = receiver.received[0]!;
    t.equal(req.method, 'POST');
    t.equal(req.path, '/hooks/certwright?x=1');
    t.equal(req.headers['content-type'], 'application/json');
    t.equal(req.headers['x-certwright-event'], 'CERTIFICATE-EXPIRING');
    t.equal(req.headers['x-certwright-event-id'], 'evt-0001');
    t.match(req.headers['x-certwright-delivery'], /^[0-9a-f]{32}$/);
    t.equal(req.headers.authorization, 'Bearer abc', 'extra headers are sent');
    t.match(req.headers['x-certwright-timestamp'], /^\d{13}$/, 'epoch milliseconds');
    t.ok(verifies(req, SECRET), 'the signature verifies with the secret');
    t.notOk(verifies(req, 'another-secret-value'), 'and not with another secret');
    t.notOk(verifies({ ...req, body: req.body.replace('www.example.com', 'evil.example.com') }, SECRET), 'an altered body does not verify');
    t.notOk(verifies({ ...req, headers: { ...req.headers, 'x-certwright-timestamp': String(Number(req.headers['x-certwright-timestamp']) + 1) } }, SECRET), 'the timestamp is signed');
    t.same(JSON.parse(req.body), {
      id: 'evt-0001',
      code: 'CERTIFICATE-EXPIRING',
      module: 'inventory',
      status: 'warning',
      tenant: 'default',
      timestamp: event.timestamp,
      principal: null,
      objectType: 'certificate',
      objectId: 'cert-42',
      payload: { thresholdDays: 30 },
      certificate: event.certificate,
      trigger: { name: 'expiry-30', event: 'expiring', thresholdDays: 30 },
    });

    await webhook.send(event, { url, secret: SECRET });
    t.equal(receiver.received[1]!.headers['x-certwright-delivery'], req.headers['x-certwright-delivery'], 'a retry carries the same delivery id');
    await webhook.send(sampleEvent({ trigger: { name: 'other', event: 'expiring' } }), { url, secret: SECRET });
    t.not(receiver.received[2]!.headers['x-certwright-delivery'], req.headers['x-certwright-delivery'], 'another trigger, another delivery id');
    const bare = await webhook.send(sampleEvent({ certificate: undefined, trigger: undefined }), { url, secret: SECRET });
    t.ok(bare.delivered);
    t.match(JSON.parse(receiver.received[3]!.body), { certificate: null, trigger: null }, 'certificate and trigger are null when absent');
  });

  t.test('receiver answers: 5xx and 429 retried, other 4xx and redirects not', async (t) => {
    const answer = async (status: number, headers: Record<string, string> = {}): Promise<DeliveryResult> => {
      receiver.respond((_req, res) => res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(`answer ${status}`));
      return webhook.send(event, { url, secret: SECRET });
    };
    t.match(await answer(500), { delivered: false, retryable: true, detail: /HTTP 500: answer 500/ });
    t.match(await answer(503), { delivered: false, retryable: true });
    t.match(await answer(429), { delivered: false, retryable: true });
    t.match(await answer(400), { delivered: false, retryable: false, detail: /HTTP 400/ });
    t.match(await answer(404), { delivered: false, retryable: false });
    t.match(await answer(202), { delivered: true });
    const before = receiver.received.length;
    t.match(await answer(302, { location: `${receiver.base}/elsewhere` }), { delivered: false, retryable: false, detail: /redirect not followed/ });
    t.equal(receiver.received.length, before + 1, 'the redirect was not followed');
    t.notOk(receiver.received.some((r) => r.path === '/elsewhere'));
    receiver.respond((_req, res) => res.writeHead(200).end('ok'));
  });

  t.test('a receiver that does not answer in time: retryable', async (t) => {
    receiver.respond(() => undefined);
    const result = await webhook.send(event, { url, secret: SECRET, timeoutMs: 300 });
    t.match(result, { delivered: false, retryable: true, detail: /no answer within 300 ms/ });
    receiver.respond((_req, res) => res.writeHead(200).end('ok'));
  });

  t.test('a closed port: retryable, and the detail never shows the URL path', async (t) => {
    const result = await webhook.send(event, { url: 'http://127.0.0.1:1/secret-token-path', secret: SECRET });
    t.match(result, { delivered: false, retryable: true, detail: /ECONNREFUSED/ });
    t.notMatch(result.detail, /secret-token-path/);
  });

  t.test('preview shows the body', async (t) => {
    t.same(JSON.parse(webhook.preview!(event)), JSON.parse(receiver.received[0]!.body));
  });
});

t.test('the channel plugin folders validate as `certwright plugins validate` checks them', async (t) => {
  for (const id of ['trigger-webhook', 'trigger-email', 'trigger-slack', 'trigger-mattermost', 'trigger-teams']) {
    const check = await validatePluginFolder(resolve('plugins', id));
    t.ok(check.ok, `${id}: ${check.ok ? 'valid' : check.errors.join('; ')}`);
    if (check.ok) t.ok(check.manifest.targetSchema, `${id} declares its targetSchema`);
  }
});
