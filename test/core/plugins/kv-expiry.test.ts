/**
 * The job plugins.kv-expiry on a kernel: in the schedule once, hourly; run, it deletes the plugin kv values
 * past their expiry and leaves the others. SQLite and, with TEST_DATABASE_URL, MariaDB.
 */
import t from 'tap';
import { KV_EXPIRY_JOB } from '../../../core/plugins/kv-expiry.js';
import { scopedKv } from '../../../core/plugins/kv-store.js';
import { bootKernel } from '../../helpers/kernel.js';
import { until } from '../../helpers/until.js';

const HOUR = 3_600_000;

t.test('the kv expiry job is scheduled hourly and deletes expired values only', async (t) => {
  const kernel = await bootKernel(t, { scheduler: { processEveryMs: 100 } });
  const knex = kernel.db.knex;
  const repeating = (await knex('scheduler_jobs').where({ name: KV_EXPIRY_JOB }).whereNotNull('repeat_interval')) as { repeat_interval: string | number }[];
  t.equal(repeating.length, 1, 'one repeating job');
  t.equal(Number(repeating[0]!.repeat_interval), HOUR, 'every hour');

  // Written two hours ago with a one-hour life: expired an hour ago.
  const past = scopedKv(knex, '@vendor/orders', 'default', () => Date.now() - 2 * HOUR);
  await past.set('order:old', { state: 'valid' }, { ttlMs: HOUR });
  await past.setIfAbsent('issued:old', 'pem', { ttlMs: HOUR });
  const now = scopedKv(knex, '@vendor/orders', 'default', () => Date.now());
  await now.set('order:new', { state: 'pending' }, { ttlMs: HOUR });
  await now.set('account', { url: 'https://acme.example/acct/1' });
  const keys = async (): Promise<string[]> => ((await knex('plugin_kv').where({ plugin_id: '@vendor/orders' }).orderBy('key').select('key')) as { key: string }[]).map((r) => r.key);
  t.same(await keys(), ['account', 'issued:old', 'order:new', 'order:old'], 'all four stored');
  t.equal(await now.get('order:old'), undefined, 'an expired value already reads as absent');

  await kernel.scheduler.now(KV_EXPIRY_JOB);
  await until('the expired values are deleted', async () => (await keys()).length === 2, 30_000, 50);
  t.same(await keys(), ['account', 'order:new'], 'the live and the lasting values stay');
});
