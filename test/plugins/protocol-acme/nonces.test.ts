/**
 * Replay nonces in the database: a nonce is accepted once, not after its lifetime, not when never issued or
 * malformed; expired ones are swept as new ones are made. Another store on the same database (another node)
 * accepts what this one issued. Runs on SQLite and MariaDB.
 */
import t from 'tap';
import { NonceStore } from '../../../plugins/protocol-acme/src/nonces.js';
import { bootKernel } from '../../helpers/kernel.js';

const kernel = await bootKernel(t);
const knex = kernel.db.knex;
let now = 1_000_000;
const store = new NonceStore(knex, () => now, 60_000);
const otherNode = new NonceStore(knex, () => now, 60_000);

t.test('accepted once, on any node', async (t) => {
  const a = await store.issue();
  t.match(a, /^[A-Za-z0-9_-]{24}$/);
  t.equal(await otherNode.consume(a), true, 'another node accepts it');
  t.equal(await store.consume(a), false, 'once');
  t.equal(await store.consume('bm90LWlzc3VlZA'), false, 'never issued');
  t.equal(await store.consume("x' OR '1'='1"), false, 'malformed');
  t.equal(await store.consume(undefined), false, 'absent');
});

t.test('expiry and sweep', async (t) => {
  const old = await store.issue();
  now += 60_001;
  t.equal(await store.consume(old), false, 'expired');
  const count = async () => Number(((await knex('acme_nonces').count({ n: '*' })) as { n: number | string }[])[0]!.n);
  const stored = await count();
  t.ok(stored >= 1, 'the expired nonce is still stored');
  t.equal(await store.sweep(), stored, 'a sweep drops every expired one');
  t.equal(await count(), 0);
});
