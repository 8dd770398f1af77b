import t from 'tap';
import { pino } from 'pino';
import { REDACT_PATHS } from '../../../core/log/logger.js';
import { bootKernel, LogCapture, tempDir } from '../../helpers/kernel.js';
import { writeProtocolPlugin } from '../../helpers/plugins.js';

const SECRETS = ['S3cr3t-api-key', 'hunter2-password', 'cookie-session-value', 'bearer-token-xyz', 'plugin-secret-value'];

t.test('secrets never reach the log', async (t) => {
  const capture = new LogCapture();
  const logger = pino({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, capture);
  logger.info({ req: { headers: { 'x-api-key': SECRETS[0], cookie: SECRETS[2], authorization: `Bearer ${SECRETS[3]}` } } }, 'request');
  logger.info({ password: SECRETS[1], config: { secret: SECRETS[4], url: 'https://vendor.example' } }, 'configured');
  logger.info({ instance: { config: { password: SECRETS[1] } } }, 'nested');
  for (const secret of SECRETS) t.notMatch(capture.text, secret, `${secret.slice(0, 8)}… is redacted`);
  t.match(capture.text, /https:\/\/vendor\.example/, 'other fields stay');
  t.match(capture.text, /\[redacted\]/);
});

t.test('request logging with credentials in headers logs none of them', async (t) => {
  const capture = new LogCapture();
  const plugins = tempDir(t);
  writeProtocolPlugin(plugins, 'webra', `scope.route({ method: 'GET', url: '/fixture/log-headers', handler: async (request) => { request.log.info({ headers: request.headers }, 'seen'); return {}; } });`);
  const kernel = await bootKernel(t, { plugins: { paths: [plugins] }, log: { level: 'info', requests: true } }, { capture });
  await kernel.app.inject({
    url: '/fixture/log-headers',
    headers: { host: 'localhost', 'x-api-id': 'administrator', 'x-api-key': SECRETS[0], cookie: `PLAY_SESSION=${SECRETS[2]}`, authorization: `Bearer ${SECRETS[3]}` },
  });
  t.match(capture.text, /incoming request/, 'requests are logged when log.requests is on');
  t.match(capture.text, /"reqId":/, 'with their request id');
  for (const secret of SECRETS) t.notMatch(capture.text, secret);
});
