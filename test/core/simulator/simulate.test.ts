/**
 * The simulator's pure parts, no database: the schedule, one certificate's renewal dates, the coverage rule,
 * the whole simulation over the hand-counted certificates (hand-count.ts), the flags and the progress bar.
 */
import t from 'tap';
import { CABF_SCHEDULE, stepFor } from '../../../core/grading/cabf.js';
import { parseSimulateFlags, SimulatorUsageError } from '../../../core/simulator/cli.js';
import { automationPath, coveredByAutomation } from '../../../core/simulator/coverage.js';
import { formatReport } from '../../../core/simulator/format.js';
import { progressBar } from '../../../core/simulator/progress.js';
import { renewalsOf } from '../../../core/simulator/renewals.js';
import { scheduleNamed } from '../../../core/simulator/schedules.js';
import { simulateRenewals, type SimCertificate } from '../../../core/simulator/simulate.js';
import { HAND_CERTIFICATES, HAND_PEAKS, HAND_PERIOD, HAND_YEARS } from './hand-count.js';

const DAY = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString();
const NOW = Date.parse('2026-07-01T00:00:00Z');

t.test('the CA/B schedule: validity 398 → 200 → 100 → 47 days, DCV reuse 398 → 200 → 100 → 10, by issuance date', async (t) => {
  t.equal(scheduleNamed('cabf'), CABF_SCHEDULE, '--schedule cabf is the grading rule’s schedule');
  t.equal(scheduleNamed('toString'), undefined, 'no inherited name passes for a schedule');
  for (const [date, maxDays, dcvReuseDays] of [
    ['2026-03-14T23:59:59.999Z', 398, 398],
    ['2026-03-15T00:00:00Z', 200, 200],
    ['2027-03-14T23:59:59.999Z', 200, 200],
    ['2027-03-15T00:00:00Z', 100, 100],
    ['2029-03-14T23:59:59.999Z', 100, 100],
    ['2029-03-15T00:00:00Z', 47, 10],
    ['2035-01-01T00:00:00Z', 47, 10],
  ] as const) {
    t.match(stepFor(Date.parse(date)), { maxDays, dcvReuseDays }, date);
  }
});

t.test('one certificate’s renewals: two thirds into each validity, shortened by the schedule', async (t) => {
  const chain = (issued: string, days: number, until: string, renewBefore = 1 / 3) =>
    [...renewalsOf({ notBefore: Date.parse(issued), notAfter: Date.parse(issued) + days * DAY - 1000 }, CABF_SCHEDULE, { renewBefore, until: Date.parse(until) })].map((r) => [
      iso(r.at),
      r.lifetimeMs / DAY,
      r.freshDcv,
    ]);
  // 398 days from 2025-06-01: renewed 265 d 8 h later, on 2026-02-21, before 2026-03-15 (keeps 398 days);
  // then 2026-11-13 16:00 with 200 days (the DCV of 2025-06-01 is 530 days old), then 100 days from 2027.
  t.same(chain('2025-06-01T00:00:00Z', 398, '2027-07-01T00:00:00Z'), [
    ['2026-02-21T08:00:00.000Z', 398, false],
    ['2026-11-13T16:00:00.000Z', 200, true],
    ['2027-03-27T00:00:00.000Z', 100, true],
    ['2027-06-01T16:00:00.000Z', 100, false],
  ]);
  // 100 days from 2029-01-01: renewed 66 d 16 h later on 2029-03-08 (still 100 days), then on 2029-05-14
  // with 47 days; from then on every 31 d 8 h, each past the 10-day DCV reuse.
  t.same(chain('2029-01-01T00:00:00Z', 100, '2029-09-01T00:00:00Z'), [
    ['2029-03-08T16:00:00.000Z', 100, false],
    ['2029-05-14T08:00:00.000Z', 47, true],
    ['2029-06-14T16:00:00.000Z', 47, true],
    ['2029-07-16T00:00:00.000Z', 47, true],
    ['2029-08-16T08:00:00.000Z', 47, true],
  ]);
  // A quarter left: 90 days renewed 67 d 12 h in.
  t.same(chain('2026-01-10T12:00:00Z', 90, '2026-06-01T00:00:00Z', 0.25), [
    ['2026-03-19T00:00:00.000Z', 90, false],
    ['2026-05-25T12:00:00.000Z', 90, false],
  ]);
  t.same(chain('2026-01-10T12:00:00Z', 90, '2026-03-11T12:00:00Z'), [], 'no renewal at the end of the period or after');
  t.same([...renewalsOf({ notBefore: 2000, notAfter: 0 }, CABF_SCHEDULE, { renewBefore: 0.33, until: 1e12 })], [], 'a notAfter before notBefore: nothing');
});

t.test('coverage: ACME is ARI-capable, other protocols drive their renewals, autoRenew is the server’s, the rest is by hand', async (t) => {
  t.equal(automationPath({ module: 'acme' }), 'ari');
  t.equal(automationPath({ module: 'ACME', autoRenew: true }), 'ari');
  for (const module of ['est', 'scep', 'mdm', 'intune', 'jamf', 'wcce']) t.equal(automationPath({ module }), 'protocol', module);
  t.equal(automationPath({ module: 'webra', autoRenew: true }), 'auto-renew');
  t.equal(automationPath({ module: null, autoRenew: true }), 'auto-renew');
  t.equal(automationPath({ module: 'webra', coveredByPolicy: true }), 'auto-renew', 'an automation policy covers it');
  for (const module of ['webra', 'discovery', null, undefined]) t.equal(automationPath({ module, autoRenew: false }), 'manual', String(module));
  t.notOk(coveredByAutomation({ module: 'webra' }));
  t.ok(coveredByAutomation({ module: 'scep' }));
});

t.test('the simulation over the hand-counted certificates', async (t) => {
  const certificates: SimCertificate[] = HAND_CERTIFICATES.filter((c) => c.excludedBy === undefined || c.excludedBy === 'expired').map((c) => ({
    id: c.name,
    dn: `CN=${c.name}`,
    module: c.module,
    autoRenew: c.autoRenew,
    notBefore: c.notBefore,
    notAfter: c.notAfter,
  }));
  const result = simulateRenewals(certificates, { schedule: CABF_SCHEDULE, fromYear: 2026, years: 2, renewBefore: 1 / 3 });
  t.same(result.years, HAND_YEARS);
  t.match(result, HAND_PEAKS);
  t.same(result.period, HAND_PERIOD);
  // F (ended a second before the period) expired; H (12 hours) short-lived.
  t.same(result.certificates, { simulated: 4, byPath: { ari: 1, protocol: 1, 'auto-renew': 1, manual: 1 }, expiredAtStart: 1, shortLived: 1 });
  t.same(result.uncovered, [{ id: 'B', dn: 'CN=B', module: 'webra' }]);

  const csv = formatReport(result, { schedule: 'cabf', query: null }, 'csv').trim().split('\n');
  t.equal(csv.length, 3, 'a header and a row per year');
  t.equal(csv[0]!.split(',').slice(0, 14).join(','), 'year,jan,feb,mar,apr,may,jun,jul,aug,sep,oct,nov,dec,renewals');
  t.equal(csv[1]!.split(',').slice(0, 14).join(','), '2026,0,1,2,0,2,0,2,0,2,0,4,0,13');
  t.match(csv[2], /^2027,2,0,3,1,2,2,2,2,2,2,2,3,23,7,7,4,5,11,4,1,2027-01-05,2,2027-03,3$/);
  const table = formatReport(result, { schedule: 'cabf', query: null }, 'table');
  t.match(table, /^2026 +0 +1 +2 +0 +2 +0 +2 +0 +2 +0 +4 +0 +13$/m);
  t.match(table, /Peak rate needed: 2 \(2026-03-11\) renewals a day, 4 \(2026-11\) a month/);
  t.match(table, /No automation covers 1 certificates:\n {2}B {2}webra {2}CN=B/);

  const quiet = simulateRenewals([], { schedule: CABF_SCHEDULE, fromYear: 2030, years: 1, renewBefore: 0.33 });
  t.same(quiet.peakDay, { at: null, renewals: 0 }, 'no renewal: no peak day');
  t.match(formatReport(quiet, { schedule: 'cabf', query: null }, 'table'), /no renewal in the period/);
});

t.test('flags: defaults, and a clear message for each bad one', async (t) => {
  t.match(parseSimulateFlags({}, NOW), { scheduleName: 'cabf', fromYear: 2026, years: 5, renewBefore: 0.33, query: null, format: 'table', output: null });
  t.equal(parseSimulateFlags({ renewBefore: '1/3' }, NOW).renewBefore, 1 / 3);
  t.equal(parseSimulateFlags({ renewBefore: 'ari' }, NOW).renewBefore, 1 / 3);
  t.match(parseSimulateFlags({ from: '2027', years: '3', format: 'csv', query: 'module = "acme"' }, NOW), { fromYear: 2027, years: 3, format: 'csv', query: 'module = "acme"' });
  const bad = (flags: Record<string, string>, message: RegExp) => t.throws(() => parseSimulateFlags(flags, NOW), { constructor: SimulatorUsageError, message }, JSON.stringify(flags));
  bad({ schedule: 'etsi' }, /^unknown --schedule "etsi" \(known: cabf\)$/);
  bad({ format: 'xml' }, /^unknown --format "xml" \(one of table, csv, json\)$/);
  bad({ query: 'module = ' }, /^--query: Invalid query at position 9/);
  bad({ query: 'colour = "red"' }, /^--query: .*colour/);
  bad({ years: '0' }, /--years must be a whole number from 1 to 50, not "0"/);
  bad({ years: 'two' }, /--years/);
  bad({ from: '26.5' }, /--from must be a whole number/);
  bad({ renewBefore: '1' }, /--renew-before must be a share of the validity between 0 and 1/);
  bad({ renewBefore: '0' }, /--renew-before/);
  bad({ renewBefore: '-0.2' }, /--renew-before/);
});

t.test('the progress bar: drawn on a terminal only, ending on a new line', async (t) => {
  const stream = (isTTY: boolean) => {
    const written: string[] = [];
    return { written, stream: { isTTY, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream };
  };
  let now = 0;
  const tty = stream(true);
  const bar = progressBar(tty.stream, 200, 'simulating', () => now);
  bar.update(50);
  now += 10;
  bar.update(60); // within 100 ms of the last drawing: not redrawn
  now += 200;
  bar.update(100);
  bar.finish();
  t.same(tty.written, [
    `\rsimulating [${'#'.repeat(8)}${'.'.repeat(22)}]  25% 50/200`,
    `\rsimulating [${'#'.repeat(15)}${'.'.repeat(15)}]  50% 100/200`,
    `\rsimulating [${'#'.repeat(30)}] 100% 200/200`,
    '\n',
  ]);
  const pipe = stream(false);
  const none = progressBar(pipe.stream, 200, 'simulating');
  none.update(100);
  none.finish();
  t.same(pipe.written, [], 'nothing on a pipe or a file');
});
