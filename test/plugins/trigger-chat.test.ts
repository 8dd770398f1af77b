import t from 'tap';
import type { TriggerChannel } from '@certwright/sdk';
import { bootKernel } from '../helpers/kernel.js';
import { sampleEvent } from '../fixtures/channels/event.js';
import { startReceiver } from '../fixtures/channels/receiver.js';

// Slack, Mattermost and Teams are SaaS: each is played here by a FAKE local receiver that records what an
// incoming webhook would get. The instances allow the loopback http address the fakes listen on.
const LOCAL = { allowHttp: true, allowPrivateNetworks: true, allowedHosts: ['127.0.0.1'] };

t.test('chat channels post their incoming-webhook formats (fake Slack, Mattermost and Teams receivers)', async (t) => {
  const fakeSlack = await startReceiver(t);
  const fakeMattermost = await startReceiver(t);
  const fakeTeams = await startReceiver(t);
  const kernel = await bootKernel(t, {
    plugins: {
      instances: {
        'trigger-slack': [{ name: 'default', config: LOCAL }],
        'trigger-mattermost': [{ name: 'default', config: LOCAL }],
        'trigger-teams': [{ name: 'default', config: LOCAL }],
      },
    },
  });
  for (const id of ['trigger-slack', 'trigger-mattermost', 'trigger-teams']) {
    t.equal(kernel.plugins.records.find((r) => r.id === id)?.state, 'active', `${id} is active`);
  }
  const channel = (type: string) => kernel.provided.triggerChannels.get(type) as TriggerChannel<object>;
  const event = sampleEvent();
  const expires = new Date(event.certificate!.notAfter).toISOString();

  t.test('slack: {text, blocks} by default, {text} from a template, mrkdwn escaped', async (t) => {
    const slack = channel('slack');
    const url = `${fakeSlack.base}/services/T000/B000/XXXX`;
    t.ok(slack.validateTarget({ url }));
    t.ok(slack.validateTarget({ url, text: '{{message.title}}' }));
    t.notOk(slack.validateTarget({ url: 'slack://x' }));
    t.notOk(slack.validateTarget({ url, text: '{{#x}}' }), 'a template that does not parse');

    t.match(await slack.send(event, { url }), { delivered: true, retryable: false });
    const req = fakeSlack.received[0]!;
    t.equal(req.path, '/services/T000/B000/XXXX');
    t.equal(req.headers['content-type'], 'application/json');
    const body = JSON.parse(req.body) as { text: string; blocks: { type: string; text?: { type: string; text: string }; fields?: { type: string; text: string }[] }[] };
    t.equal(body.text, 'Certificate expires in 30 days: www.example.com');
    t.same(body.blocks[0], { type: 'section', text: { type: 'mrkdwn', text: '*Certificate expires in 30 days: www.example.com*' } });
    t.equal(body.blocks[1]!.type, 'section');
    t.match(body.blocks[1]!.fields, [
      { type: 'mrkdwn', text: '*Subject*\nCN=www.example.com, O=Example Corp, C=FR' },
      { type: 'mrkdwn', text: '*Serial*\n0a1b2c3d' },
      { type: 'mrkdwn', text: '*Issuer*\nCN=Example Issuing CA, O=Example Corp' },
      { type: 'mrkdwn', text: `*Expires*\n${expires}` },
    ]);
    t.ok(body.blocks[1]!.fields!.length <= 10, 'a section holds at most 10 fields');

    const hostile = sampleEvent({ certificate: { ...event.certificate!, dn: 'CN=<!channel> & co' } });
    await slack.send(hostile, { url, text: '{{certificate.dn}} expires in {{certificate.daysLeft}} days ({{trigger.name}})' });
    t.same(JSON.parse(fakeSlack.received[1]!.body), { text: 'CN=&lt;!channel&gt; &amp; co expires in 30 days (expiry-30)' }, 'a template alone; <, > and & escaped');

    fakeSlack.respond((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('no_service'));
    t.match(await slack.send(event, { url }), { delivered: false, retryable: false, detail: /HTTP 404: no_service/ });
    fakeSlack.respond((_req, res) => res.writeHead(500).end('oops'));
    t.match(await slack.send(event, { url }), { delivered: false, retryable: true });
  });

  t.test('mattermost: {text, username, icon_url, channel}', async (t) => {
    const mattermost = channel('mattermost');
    const url = `${fakeMattermost.base}/hooks/xxx-generatedkey-xxx`;
    t.ok(mattermost.validateTarget({ url, username: 'certwright', iconUrl: 'https://example.org/i.png', channel: 'pki-alerts' }));
    t.notOk(mattermost.validateTarget({ url, iconUrl: 'javascript:alert(1)' }));

    t.match(await mattermost.send(event, { url, username: 'certwright', iconUrl: 'https://example.org/i.png', channel: 'pki-alerts' }), { delivered: true });
    const body = JSON.parse(fakeMattermost.received[0]!.body) as Record<string, string>;
    t.same(Object.keys(body).sort(), ['channel', 'icon_url', 'text', 'username']);
    t.match(body, { username: 'certwright', icon_url: 'https://example.org/i.png', channel: 'pki-alerts' });
    t.equal(body.text!.split('\n')[0], '**Certificate expires in 30 days: www.example.com**');
    t.match(body.text, /\n- \*\*Serial:\*\* 0a1b2c3d\n/);
    t.match(body.text, new RegExp(`\\n- \\*\\*Expires:\\*\\* ${expires.replace(/\./g, '\\.')}\\n`));

    await mattermost.send(event, { url, text: ':warning: {{certificate.commonName}} expires on {{certificate.notAfterIso}}' });
    t.same(JSON.parse(fakeMattermost.received[1]!.body), { text: `:warning: www.example.com expires on ${expires}` }, 'only text when nothing else is set');
  });

  t.test('teams: an Adaptive Card message by default, a MessageCard on request', async (t) => {
    const teams = channel('teams');
    const url = `${fakeTeams.base}/workflows/abc/triggers/manual/paths/invoke?sig=xyz`;
    t.ok(teams.validateTarget({ url, format: 'message-card' }));
    t.notOk(teams.validateTarget({ url, format: 'hero-card' }));
    // Teams Workflows answer 202 Accepted.
    fakeTeams.respond((_req, res) => res.writeHead(202).end());

    t.match(await teams.send(event, { url }), { delivered: true });
    const adaptive = JSON.parse(fakeTeams.received[0]!.body);
    t.equal(adaptive.type, 'message');
    t.equal(adaptive.attachments.length, 1);
    const attachment = adaptive.attachments[0];
    t.equal(attachment.contentType, 'application/vnd.microsoft.card.adaptive');
    t.equal(attachment.contentUrl, null);
    t.match(attachment.content, { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4' });
    t.same(attachment.content.body[0], { type: 'TextBlock', text: 'Certificate expires in 30 days: www.example.com', weight: 'Bolder', size: 'Medium', wrap: true });
    t.equal(attachment.content.body[1].type, 'FactSet');
    t.match(attachment.content.body[1].facts, [
      { title: 'Subject', value: 'CN=www.example.com, O=Example Corp, C=FR' },
      { title: 'Serial', value: '0a1b2c3d' },
    ]);

    t.match(await teams.send(event, { url, format: 'message-card' }), { delivered: true });
    const card = JSON.parse(fakeTeams.received[1]!.body);
    t.match(card, {
      '@type': 'MessageCard',
      '@context': 'https://schema.org/extensions',
      summary: 'Certificate expires in 30 days: www.example.com',
      title: 'Certificate expires in 30 days: www.example.com',
      themeColor: 'FFB900',
    });
    t.match(card.sections[0].facts, [{ name: 'Subject', value: 'CN=www.example.com, O=Example Corp, C=FR' }]);

    await teams.send(event, { url, text: '{{certificate.commonName}}: {{certificate.daysLeft}} days left' });
    const templated = JSON.parse(fakeTeams.received[2]!.body);
    t.same(templated.attachments[0].content.body, [{ type: 'TextBlock', text: 'www.example.com: 30 days left', wrap: true }]);
  });
});
