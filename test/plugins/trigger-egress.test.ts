import t from 'tap';
import { DEFAULT_EGRESS_POLICY, EgressDeniedError, TransientError, egressPolicyFrom, type TriggerChannel } from '@certwright/sdk';
import { classifyAddress, fetchConfigured, resolveChecked, type Resolve } from '../../core/plugins/egress.js';
import { bootKernel } from '../helpers/kernel.js';
import { sampleEvent } from '../fixtures/channels/event.js';
import { startReceiver } from '../fixtures/channels/receiver.js';

t.test('address classes refused for administrator-configured destinations', async (t) => {
  const refused: [string, RegExp, boolean][] = [
    ['127.0.0.1', /loopback/, false],
    ['127.8.9.10', /loopback/, false],
    ['::1', /loopback/, false],
    ['10.1.2.3', /private/, false],
    ['172.16.0.1', /private/, false],
    ['172.31.255.254', /private/, false],
    ['192.168.1.1', /private/, false],
    ['169.254.10.1', /link-local/, false],
    ['fe80::1', /link-local/, false],
    ['fe80::1%eth0', /link-local/, false],
    ['fd12:3456::1', /unique-local/, false],
    ['100.64.0.1', /carrier-grade NAT/, false],
    ['169.254.169.254', /metadata/, true],
    ['fd00:ec2::254', /metadata/, true],
    ['100.100.100.200', /metadata/, true],
    ['0.0.0.0', /unspecified/, true],
    ['::', /unspecified/, true],
    ['224.0.0.1', /multicast/, true],
    ['ff02::1', /multicast/, true],
    ['::ffff:127.0.0.1', /loopback address .inside the IPv6 address./, false],
    ['::ffff:7f00:1', /loopback/, false],
    ['::ffff:169.254.169.254', /metadata/, true],
    ['64:ff9b::a00:1', /private/, false],
    ['2002:c0a8:0101::1', /private/, false],
  ];
  for (const [address, label, always] of refused) {
    t.match(classifyAddress(address), { label, always }, address);
  }
  for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:0808:0808::1']) {
    t.equal(classifyAddress(address), null, `${address} is public`);
  }
});

t.test('resolution: literal IPs, localhost, and every resolved address checked', async (t) => {
  const policy = egressPolicyFrom({});
  await t.rejects(resolveChecked('127.0.0.1', policy), new EgressDeniedError('host 127.0.0.1 refused: 127.0.0.1 is a loopback address'));
  await t.rejects(resolveChecked('localhost', policy), { name: 'EgressDeniedError', message: /host localhost refused: (127\.0\.0\.1|::1) is a loopback address/ });
  await t.rejects(resolveChecked('169.254.169.254', { ...policy, allowPrivateNetworks: true }), { message: /metadata address; never reachable/ }, 'metadata stays refused');
  t.same(await resolveChecked('127.0.0.1', { ...policy, allowPrivateNetworks: true }), [{ address: '127.0.0.1', family: 4 }]);
  // A name with one public and one private address is refused whole: the client must not pick.
  const split: Resolve = async () => [
    { address: '93.184.216.34', family: 4 },
    { address: '10.0.0.7', family: 4 },
  ];
  await t.rejects(resolveChecked('mixed.example', policy, split), { message: /10\.0\.0\.7 is a private address/ });
  const nowhere: Resolve = async () => {
    throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
  };
  await t.rejects(resolveChecked('nowhere.invalid', policy, nowhere), TransientError, 'a name that does not resolve may be retried');
});

t.test('the connection goes to the checked address (no second DNS lookup), answers are capped', async (t) => {
  const receiver = await startReceiver(t);
  const policy = { ...DEFAULT_EGRESS_POLICY, allowedHosts: ['*'], allowHttp: true, allowPrivateNetworks: true, maxResponseBytes: 1024 };
  // hooks.test does not exist in DNS: only the resolver the check used knows it.
  const pinned: Resolve = async (host) => (host === 'hooks.test' ? [{ address: '127.0.0.1', family: 4 }] : []);
  receiver.respond((_req, res) => res.writeHead(200).end('x'.repeat(200_000)));
  const res = await fetchConfigured(`http://hooks.test:${receiver.port}/in`, { method: 'POST', body: '{}' }, policy, pinned);
  t.equal(res.status, 200);
  t.equal(res.body.length, 1024);
  t.equal(res.truncated, true);
  t.equal(receiver.received[0]!.headers.host, `hooks.test:${receiver.port}`, 'the Host header names the configured host');
  await t.rejects(fetchConfigured(`http://other.test:${receiver.port}/`, {}, policy, pinned), TransientError);
});

t.test('egress refusals through the channels (real plugin manager)', async (t) => {
  const receiver = await startReceiver(t);
  const kernel = await bootKernel(t, {
    plugins: {
      instances: {
        // trigger-webhook: no instance, so the default policy (any public https host).
        'trigger-slack': [{ name: 'default', config: { allowedHosts: ['hooks.slack.com'] } }],
        'trigger-teams': [{ name: 'default', config: { allowHttp: true } }],
        'trigger-mattermost': [{ name: 'default', config: { allowPrivateNetworks: true } }],
      },
    },
  });
  const channel = (type: string) => kernel.provided.triggerChannels.get(type) as TriggerChannel<object>;
  const event = sampleEvent();
  const webhook = (url: string) => channel('webhook').send(event, { url, secret: 'whsec-0123456789abcdef' });
  const final = { delivered: false, retryable: false };

  t.match(await webhook(`${receiver.base}/hook`), { ...final, detail: /egress refused: http:\/\/127\.0\.0\.1 refused: .*requires https/ }, 'http with the default policy');
  t.match(await webhook(`https://127.0.0.1:${receiver.port}/hook`), { ...final, detail: /127\.0\.0\.1 is a loopback address; private networks are not allowed/ });
  t.match(await webhook(`https://localhost:${receiver.port}/hook`), { ...final, detail: /host localhost refused: .* is a loopback address/ });
  t.match(await webhook('https://10.20.30.40/hook'), { ...final, detail: /private address/ });
  t.match(await webhook('https://[::ffff:192.168.0.1]/hook'), { ...final, detail: /private address .inside the IPv6 address./ });
  t.match(await webhook('https://169.254.169.254/latest/meta-data/'), { ...final, detail: /metadata address/ });
  t.match(await webhook('https://user:pw@example.com/hook'), { ...final, detail: /credentials in the URL/ });

  t.match(await channel('slack').send(event, { url: 'https://hooks.evil.example/services/T/B/X' }), { ...final, detail: /host hooks\.evil\.example refused: not in this channel's allowedHosts/ });
  t.notMatch((await channel('slack').send(event, { url: 'https://hooks.evil.example/services/T/B/X' })).detail, /services/, 'the secret path is not in the detail');

  // http allowed but not private networks: a real listener on loopback, never reached.
  t.match(await channel('teams').send(event, { url: `${receiver.base}/teams` }), { ...final, detail: /127\.0\.0\.1 is a loopback address/ });
  // private networks allowed but not http.
  t.match(await channel('mattermost').send(event, { url: `${receiver.base}/mm` }), { ...final, detail: /requires https/ });
  t.match(await channel('mattermost').send(event, { url: 'https://169.254.169.254/hooks/x' }), { ...final, detail: /metadata address/ }, 'metadata refused even with private networks allowed');
  t.equal(receiver.received.length, 0, 'no refused destination was contacted');
});
