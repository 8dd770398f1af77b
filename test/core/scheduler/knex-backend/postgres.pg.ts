/**
 * The backend's suites on PostgreSQL. Not a *.test.ts file: the default run (`npm test`, SQLite or MariaDB)
 * has no PostgreSQL server and would report an empty file as a skipped test. Run it on purpose:
 *
 *   TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/certwright_test npx tap test/core/scheduler/knex-backend/postgres.pg.ts
 *
 * Each test creates (and drops) its own database `<base>_<random>` on that server.
 */
import t from 'tap';
import { postgresUrl } from '../../../helpers/postgres.js';
import { postgresDb } from './harness.js';
import { agendaSuite } from './suites/agenda.js';
import { lockSuite } from './suites/lock.js';
import { loggerSuite } from './suites/logger.js';
import { querySuite } from './suites/query.js';
import { raceSuite } from './suites/race.js';
import { saveSuite } from './suites/save.js';

// Run without a server: say so as a failure rather than pass (or skip) silently.
if (!postgresUrl()) throw new Error('postgres.pg.ts needs TEST_POSTGRES_URL (postgres://user@host:5432/<base>)');

saveSuite(t, postgresDb);
lockSuite(t, postgresDb);
querySuite(t, postgresDb);
loggerSuite(t, postgresDb);
raceSuite(t, postgresDb);
agendaSuite(t, postgresDb);
