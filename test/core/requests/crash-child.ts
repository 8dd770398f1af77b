// A kernel in its own process for the "nothing lost" test (test/core/requests/nothing-lost.test.ts): boots on
// the test's database (DATABASE_URL, or the SQLite file in DATA_DIR), submits one direct decentralized enroll
// and, with CERTWRIGHT_FAULT=pki-after-connector-answer, dies by SIGKILL after the local CA answered and
// before the completion transaction. Prints `submitting` first, and the answer if it survives.
import { generateKeyPairSync } from 'node:crypto';
import { pino } from 'pino';
import { loadConfig } from '../../../core/config/index.js';
import { Kernel } from '../../../core/kernel.js';
import { buildCsr } from '../../../core/pki/csr/build.js';
import { ADMIN_HEADERS, TEST_ADMIN_SECRET } from '../../helpers/kernel.js';

const config = loadConfig({
  env: {},
  overrides: {
    dataDir: process.env.DATA_DIR!,
    database: { url: process.env.DATABASE_URL || null },
    log: { level: 'warn' },
    scheduler: { lockLifetimeMs: 2000 },
    security: { adminSecret: TEST_ADMIN_SECRET, argon2: { memoryKiB: 1024, iterations: 1 } },
    pki: { queue: { leaseMs: Number(process.env.LEASE_MS ?? 1500), pollEveryMs: 200 } },
  },
});
const kernel = await Kernel.boot({ config, logger: pino({ level: 'warn' }) });
const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
const der = buildCsr(key, { subject: 'CN=crash.example.com', sans: [{ sanType: 'DNSNAME', value: 'crash.example.com' }] });
const csr = `-----BEGIN CERTIFICATE REQUEST-----\n${Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE REQUEST-----\n`;
process.stdout.write('submitting\n');
const res = await kernel.app.inject({
  method: 'POST',
  url: '/api/v1/requests/submit',
  headers: { host: 'localhost', 'content-type': 'application/json', ...ADMIN_HEADERS },
  payload: JSON.stringify({ module: 'webra', workflow: 'enroll', profile: 'default', template: { csr } }),
});
process.stdout.write(`answered ${res.statusCode} ${res.body}\n`);
await kernel.stop();
process.exit(0);
