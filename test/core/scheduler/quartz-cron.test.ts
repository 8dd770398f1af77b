import t from 'tap';
import { nextCronOccurrence, schedulerCron } from '../../../core/scheduler/tasks/cron.js';

const from = new Date('2025-01-01T00:00:00Z'); // a Wednesday
const next = (expression: string, timezone = 'UTC') => {
  const r = nextCronOccurrence(expression, timezone, from);
  return r.ok ? new Date(r.next).toISOString() : `invalid: ${r.reason}`;
};

t.test('Quartz expressions (? in day-of-month or day-of-week) run at the times Quartz gives them', async (t) => {
  t.equal(next('0 0 8 * * ?'), '2025-01-01T08:00:00.000Z', 'every day at 08:00 (the MCP tool\'s example)');
  t.equal(next('0 0 8 * * ? *'), '2025-01-01T08:00:00.000Z', 'with a year field of *');
  t.equal(next('0 0 8 ? * 2'), '2025-01-06T08:00:00.000Z', 'Quartz 2 is Monday (cron 2 would be Tuesday)');
  t.equal(next('0 0 8 ? * 1'), '2025-01-05T08:00:00.000Z', 'Quartz 1 is Sunday');
  t.equal(next('0 0 8 ? * 7'), '2025-01-04T08:00:00.000Z', 'Quartz 7 is Saturday');
  t.equal(next('0 0 8 ? * MON-FRI'), '2025-01-01T08:00:00.000Z', 'names mean the same days');
  t.equal(next('0 0 8 ? * 2-3'), '2025-01-06T08:00:00.000Z', 'a range: Monday and Tuesday');
  t.equal(next('0 0 8 ? * 1/3'), '2025-01-01T08:00:00.000Z', 'a step: SUN, WED, SAT');
  t.equal(next('0 0 8 ? * 6L'), '2025-01-31T08:00:00.000Z', '6L: the last Friday of the month');
  t.equal(next('0 0 8 ? * 2#1'), '2025-01-06T08:00:00.000Z', '2#1: the first Monday');
  t.equal(next('0 0 8 ? * L'), '2025-01-04T08:00:00.000Z', 'L alone: Saturday');
  t.equal(next('0 0/15 * * * ?'), '2025-01-01T00:15:00.000Z', 'a step on minutes');
  t.equal(next('0 0 8 L * ?'), '2025-01-31T08:00:00.000Z', 'L: the last day of the month');
  t.equal(next('0 0 8 * * ?', 'Europe/Paris'), '2025-01-01T07:00:00.000Z', 'in the task\'s time zone');
  t.same(schedulerCron('0 0 8 ? * 1,7'), { ok: true, cron: '0 0 8 * * 0,6' }, 'what the scheduler is given');
});

t.test('what Quartz has and the scheduler cannot run is refused, saying why', async (t) => {
  t.match(next('0 0 8 * * ? 2030'), /the year field "2030" is not supported/);
  t.match(next('0 0 8 15W * ?'), /W \(nearest weekday\) and L-n are not supported/);
  t.match(next('0 0 8 L-3 * ?'), /L-n are not supported/);
  t.match(next('0 0 8 ? * ?'), /not both/);
  t.match(next('0 0 8 ? * 0'), /day-of-week "0" is not Quartz's/);
  t.match(next('0 0 25 * * ?'), /^invalid: /);
});

t.test('cron expressions (no ?) keep their meaning', async (t) => {
  t.equal(next('0 8 * * 2'), '2025-01-07T08:00:00.000Z', 'cron 2 is Tuesday');
  t.equal(next('30 0 8 * * 0'), '2025-01-05T08:00:30.000Z', 'six fields with seconds, 0 is Sunday');
  t.match(next('0 0 8 * * * *'), /expected 5 or 6 fields, got 7/);
});
