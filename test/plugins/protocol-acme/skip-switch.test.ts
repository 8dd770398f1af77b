/**
 * The validation-skip switch of the ACME benchmark: CERTWRIGHT_ACME_SKIP_VALIDATION=1 is honoured only with
 * NODE_ENV=test or benchmark (a challenge response then validates at once); anywhere else the plugin refuses
 * to load, so a production server never issues without validation. Runs on SQLite and MariaDB.
 */
import t from 'tap';
import { bootKernel, ENROLLMENT_BOOTSTRAP } from '../../helpers/kernel.js';
import { JwsClient } from './jws-client.js';

const saved = { skip: process.env.CERTWRIGHT_ACME_SKIP_VALIDATION, env: process.env.NODE_ENV };
t.teardown(() => {
  for (const [k, v] of [['CERTWRIGHT_ACME_SKIP_VALIDATION', saved.skip], ['NODE_ENV', saved.env]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

t.test('refused outside tests and benchmarks', async (t) => {
  process.env.CERTWRIGHT_ACME_SKIP_VALIDATION = '1';
  process.env.NODE_ENV = 'production';
  const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);
  const acme = kernel.plugins.summaries().find((p) => p.id === 'protocol-acme')!;
  t.equal(acme.state, 'degraded', 'the plugin does not load');
  t.match(acme.reason, /tests and benchmarks only/, 'and says why');
  const res = await kernel.app.inject({ method: 'GET', url: '/acme/default/directory', headers: { host: 'localhost' } });
  t.equal(res.statusCode, 404, 'no ACME is served');
});

t.test('honoured with NODE_ENV=benchmark', async (t) => {
  process.env.CERTWRIGHT_ACME_SKIP_VALIDATION = '1';
  process.env.NODE_ENV = 'benchmark';
  const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);
  const base = 'http://localhost';
  const client = await JwsClient.create(kernel.app, base);
  const directory = (await client.request('GET', `${base}/acme/default/directory`)).json;
  client.kid = (await client.post(directory, directory.newAccount, {})).headers.location as string;
  const order = await client.post(directory, directory.newOrder, { identifiers: [{ type: 'dns', value: 'nowhere.invalid' }] });
  const authz = (await client.post(directory, order.json.authorizations[0], null)).json;
  const answered = await client.post(directory, authz.challenges[0].url, {});
  t.equal(answered.json.status, 'valid', 'the challenge is valid at once, nothing fetched');
  t.equal((await client.post(directory, order.headers.location as string, null)).json.status, 'ready', 'the order is ready');
});
