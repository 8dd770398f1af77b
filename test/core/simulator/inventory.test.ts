/**
 * `certwright simulate renewals` over a real inventory: the hand-counted certificates (hand-count.ts) are
 * imported through the inventory repository, then replayed by simulateInventory (the reader and the
 * simulation the command runs) and by the command itself, as a child process pointed at this database.
 */
import { generateKeyPairSync } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { InventoryContext } from '../../../core/inventory/index.js';
import { toPem } from '../../../core/pki/input.js';
import { selfSignedCertificate } from '../../../core/pki/issue/self-signed.js';
import { parseSimulateFlags, simulateInventory } from '../../../core/simulator/cli.js';
import { bootKernel, tempDir } from '../../helpers/kernel.js';
import { HAND_CERTIFICATES, HAND_PEAKS, HAND_PERIOD, HAND_YEARS } from './hand-count.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const BIN = join(ROOT, 'bin/certwright.js');
// Each start of the CLI loads the sources through tsx: seconds each, more on a loaded machine.
t.setTimeout(400_000);

const kernel = await bootKernel(t);
const { repository } = kernel.container.resolve<InventoryContext>('inventory');
const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const ids = new Map<string, string>();
for (const c of HAND_CERTIFICATES) {
  const der = selfSignedCertificate(privateKey, { subject: `CN=${c.name}.example`, sans: [{ sanType: 'DNSNAME', value: `${c.name.toLowerCase()}.example` }], basicConstraints: { ca: false }, notBefore: c.notBefore, notAfter: c.notAfter });
  const stored = await repository.insert('default', {
    certificate: toPem(der),
    module: c.module,
    autoRenew: c.autoRenew,
    ...(c.excludedBy === 'revoked' ? { revoked: true, revocationDate: Date.parse('2026-01-20T00:00:00Z'), revocationReason: 'superseded' } : {}),
    // What the request workflow writes on the predecessor when it renews a certificate.
    ...(c.excludedBy === 'renewed' ? { metadata: [{ key: 'renewed_certificate_id', value: 'a'.repeat(24) }] } : {}),
  });
  ids.set(c.name, stored._id);
}
const B = { id: ids.get('B')!, dn: 'CN=B.example', module: 'webra' };

const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  CERTWRIGHT_DATA_DIR: kernel.config.dataDir,
  LOG_LEVEL: 'warn',
  ...(kernel.config.database.url ? { DATABASE_URL: kernel.config.database.url } : {}),
};
const run = (args: string[]) => spawnSync(process.execPath, [BIN, 'simulate', 'renewals', ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 });

t.test('simulateInventory reads the inventory (revoked, expired, renewed left out) and finds the hand count', async (t) => {
  const result = await simulateInventory(kernel.db.knex, 'default', parseSimulateFlags({ from: '2026', years: '2', renewBefore: '1/3' }, Date.now()));
  t.same(result.years, HAND_YEARS);
  t.match(result, HAND_PEAKS);
  t.same(result.period, HAND_PERIOD);
  // D, F and G are not read at all (expiredAtStart counts what the reader hands over); H is short-lived.
  t.same(result.certificates, { simulated: 4, byPath: { ari: 1, protocol: 1, 'auto-renew': 1, manual: 1 }, expiredAtStart: 0, shortLived: 1 });
  t.same(result.uncovered, [B]);
});

t.test('the command: --format json is the hand count; --query narrows; --output writes a file', async (t) => {
  const json = run(['--schedule', 'cabf', '--from', '2026', '--years', '2', '--renew-before', '1/3', '--format', 'json']);
  t.equal(json.status, 0, 'exit 0', { stderr: json.stderr });
  const report = JSON.parse(json.stdout);
  t.same(report.years, HAND_YEARS);
  t.match(report, { schedule: 'cabf', query: null, renewBefore: 1 / 3, ...HAND_PEAKS, period: HAND_PERIOD, certificates: { simulated: 4, shortLived: 1 } });
  t.same(report.uncovered, [B]);
  t.notMatch(json.stderr, /simulating \[/, 'no progress bar when stderr is not a terminal');

  // Only A (acme): 5 renewals in 2026, 7 in 2027, one a day at most.
  const file = join(tempDir(t), 'acme.csv');
  const csv = run(['--from', '2026', '--years', '2', '--renew-before', '1/3', '--query', 'module = "acme"', '--format', 'csv', '--output', file]);
  t.equal(csv.status, 0, 'exit 0', { stderr: csv.stderr });
  t.equal(csv.stdout, '', 'the report goes to the file');
  const rows = readFileSync(file, 'utf8').trim().split('\n');
  t.same(
    rows.slice(1).map((r) => r.split(',').slice(0, 15).join(',')),
    ['2026,0,0,1,0,1,0,1,0,1,0,1,0,5,5', '2027,1,0,1,0,1,0,1,0,1,0,1,1,7,7'],
    'year, January … December, renewals, ACME renewals',
  );
});

// Each bad flag's message is checked on parseSimulateFlags (simulate.test.ts); one run of the real command shows
// how any of them reaches the user (a CLI start costs about 12 s: one is enough).
t.test('a bad flag: one line on stderr, exit 2, no stack trace', async (t) => {
  for (const [args, message] of [[['--query', 'module = '], /^certwright: --query: Invalid query at position 9: .*\n$/]] as const) {
    const result = run([...args]);
    t.equal(result.status, 2, `${args.join(' ')}: exit 2`);
    t.match(result.stderr, message, args.join(' '));
    t.notMatch(result.stderr, /\n\s+at /, 'no stack trace');
    t.equal(result.stdout, '', 'nothing on stdout');
  }
});
