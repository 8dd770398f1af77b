/**
 * Where ACME validation may connect: never to cloud metadata, unspecified or multicast addresses; to loopback and
 * private addresses only while `validation.allowPrivateNetworks` is on (the default, for an internal CLM). A
 * refused address fails the challenge at once (rejectedIdentifier), it is not retried.
 */
import t from 'tap';
import { Validator } from '../../../plugins/protocol-acme/src/validation.js';

const settings = { allowPrivateNetworks: true, httpPort: 9, tlsAlpnPort: 9, dnsServers: [], timeoutMs: 500 };

t.test('private networks refused when not allowed', async (t) => {
  const strict = new Validator({ ...settings, allowPrivateNetworks: false });
  for (const address of ['127.0.0.1', '10.1.2.3', '::1', 'fd12::1']) {
    const result = await strict.validate('http-01', { type: 'ip', value: address }, 'token', 'token.key');
    t.match(result, { valid: false, retryable: false, error: { type: 'urn:ietf:params:acme:error:rejectedIdentifier' } }, `${address}: refused, final`);
  }
});

t.test('cloud metadata refused always', async (t) => {
  const open = new Validator(settings);
  const result = await open.validate('http-01', { type: 'ip', value: '169.254.169.254' }, 'token', 'token.key');
  t.match(result, { valid: false, retryable: false, error: { detail: /cloud metadata/ } });
});

t.test('private allowed: the connection is tried (nothing listens on port 9: retryable)', async (t) => {
  const open = new Validator(settings);
  const result = await open.validate('http-01', { type: 'ip', value: '127.0.0.1' }, 'token', 'token.key');
  t.match(result, { valid: false, retryable: true, error: { type: 'urn:ietf:params:acme:error:connection' } });
});
