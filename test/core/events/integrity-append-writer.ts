// An event writer in its own process, for the two-process chain test: it opens the test database, says
// "ready", waits for a line on stdin (so both writers start together), appends COUNT events with its
// WRITER name in the payload, prints "done" and exits.
// Env: DATABASE_URL (or DATA_DIR for SQLite), WRITER, COUNT.
import { once } from 'node:events';
import { openDatabase } from '../../../core/db/connection.js';
import { EventStore } from '../../../core/events/store.js';

const writer = process.env.WRITER ?? 'w?';
const count = Number(process.env.COUNT ?? 50);
const db = openDatabase({ url: process.env.DATABASE_URL || null, dataDir: process.env.DATA_DIR ?? '.', pool: { min: 0, max: 4 } });
const store = new EventStore(db.knex, db.engine);
await db.knex.raw('select 1');
process.stdout.write('ready\n');
await once(process.stdin, 'data');
// An open stdin would keep the process alive after the appends.
process.stdin.destroy();
// A few appends in flight at once within the process too.
let next = 0;
await Promise.all(
  Array.from({ length: 4 }, async () => {
    while (next < count) {
      const n = next++;
      await store.append({ tenant: 'default', code: 'TEST-EVENT', module: 'test', status: 'success', payload: { writer, n } });
    }
  }),
);
await db.knex.destroy();
process.stdout.write('done\n');
