import type { ConfigObject, ConfigObjectType } from '@certwright/sdk';
import { description, objectName } from '../../config-objects/types/common.js';

/**
 * Execution policies (/api/v1/automation/executions/): when automation may act. The spec shows no field of
 * ExecutionPolicy beyond its name ("Fields of the execution policy and its response: not shown"); the fields
 * are the vendor clients' (horizon-go ExecutionPolicy / ExecutionPeriod, horizon-mcp execution-policies):
 * `name`, `description`, `authorizedPeriods` and `forbiddenPeriods`, each period a conjunction of optional
 * constraints: `dateRange {start, end}` (calendar dates), `weeks` (aligned weeks of the year, 1–53),
 * `weekDays` (MONDAY…SUNDAY) and `timeRange` (`{start, end}` times of day, or the same as one string
 * `HH:MM[:SS]-HH:MM[:SS]`, the OpenAPI's string form). Weeks and week days are de-duplicated as stored.
 */
export const WEEK_DAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;

const DATE = '^\\d{4}-\\d{2}-\\d{2}$';
const TIME = '(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d)?';
const dateValue = { type: 'string', pattern: DATE, description: 'A calendar date, YYYY-MM-DD' } as const;
const timeValue = { type: 'string', pattern: `^${TIME}$`, description: 'A time of day, HH:MM or HH:MM:SS (UTC)' } as const;

const period = {
  type: 'object',
  additionalProperties: false,
  description: 'A window: every constraint present must hold (a constraint left out holds always)',
  properties: {
    dateRange: {
      anyOf: [
        { type: 'null' },
        { type: 'object', additionalProperties: false, required: ['start', 'end'], properties: { start: dateValue, end: dateValue } },
      ],
    },
    weeks: { type: 'array', maxItems: 53, items: { type: 'integer', minimum: 1, maximum: 53 }, description: 'Aligned weeks of the year (days 1–7 are week 1)' },
    weekDays: { type: 'array', maxItems: 7, items: { type: 'string', enum: [...WEEK_DAYS] } },
    timeRange: {
      anyOf: [
        { type: 'null' },
        { type: 'string', pattern: `^${TIME}-${TIME}$` },
        { type: 'object', additionalProperties: false, required: ['start', 'end'], properties: { start: timeValue, end: timeValue } },
      ],
    },
  },
} as const;

const periods = { type: 'array', maxItems: 100, items: period } as const;

export interface ExecutionPeriod {
  dateRange?: { start: string; end: string } | null;
  weeks?: number[];
  weekDays?: string[];
  timeRange?: string | { start: string; end: string } | null;
}

export interface ExecutionPolicy {
  name: string;
  description?: string | null;
  authorizedPeriods?: ExecutionPeriod[];
  forbiddenPeriods?: ExecutionPeriod[];
}

const seconds = (time: string): number => {
  const [h, m, s] = time.split(':').map(Number);
  return h! * 3600 + m! * 60 + (s ?? 0);
};

/** `{start, end}` of a time range in either form. */
export function timeBounds(range: NonNullable<ExecutionPeriod['timeRange']>): { start: number; end: number } {
  if (typeof range === 'string') {
    const [start, end] = range.split('-') as [string, string];
    return { start: seconds(start), end: seconds(end) };
  }
  return { start: seconds(range.start), end: seconds(range.end) };
}

const realDate = (value: string): boolean => {
  const at = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(at.getTime()) && at.toISOString().slice(0, 10) === value;
};

/** What the schema cannot say: real calendar dates, and each range's start not after its end. */
export function periodProblem(policy: ExecutionPolicy): string | undefined {
  for (const field of ['authorizedPeriods', 'forbiddenPeriods'] as const) {
    for (const [i, p] of (policy[field] ?? []).entries()) {
      const at = `${field}.${i}`;
      if (p.dateRange) {
        for (const end of ['start', 'end'] as const) if (!realDate(p.dateRange[end])) return `${at}.dateRange.${end}: "${p.dateRange[end]}" is not a calendar date`;
        if (p.dateRange.start > p.dateRange.end) return `${at}.dateRange: start must not be after end`;
      }
      if (p.timeRange) {
        const { start, end } = timeBounds(p.timeRange);
        if (start > end) return `${at}.timeRange: start must not be after end`;
      }
    }
  }
  return undefined;
}

const unique = <T>(values: readonly T[]): T[] => [...new Set(values)];

function normalizePeriods(list: unknown): unknown {
  if (!Array.isArray(list)) return list;
  return (list as ExecutionPeriod[]).map((p) => ({
    ...p,
    ...(Array.isArray(p.weeks) ? { weeks: unique(p.weeks) } : {}),
    ...(Array.isArray(p.weekDays) ? { weekDays: unique(p.weekDays) } : {}),
  }));
}

const DAY_MS = 86_400_000;

/** Whether one period admits the instant `at` (epoch ms, read in UTC). */
export function periodAdmits(p: ExecutionPeriod, at: number): boolean {
  const d = new Date(at);
  const date = d.toISOString().slice(0, 10);
  if (p.dateRange && (date < p.dateRange.start || date > p.dateRange.end)) return false;
  if (p.weeks && p.weeks.length > 0) {
    const dayOfYear = Math.floor((Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - Date.UTC(d.getUTCFullYear(), 0, 1)) / DAY_MS) + 1;
    if (!p.weeks.includes(Math.floor((dayOfYear - 1) / 7) + 1)) return false;
  }
  if (p.weekDays && p.weekDays.length > 0 && !p.weekDays.includes(WEEK_DAYS[(d.getUTCDay() + 6) % 7]!)) return false;
  if (p.timeRange) {
    const { start, end } = timeBounds(p.timeRange);
    const now = d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds();
    if (now < start || now > end) return false;
  }
  return true;
}

/**
 * Whether automation governed by this policy may act at `at`: inside an authorized period (any, or always
 * when none is listed) and inside no forbidden period. For the lifecycle tasks (issue 30 item 3).
 */
export function executionAllowed(policy: ExecutionPolicy, at: number): boolean {
  const authorized = policy.authorizedPeriods ?? [];
  if (authorized.length > 0 && !authorized.some((p) => periodAdmits(p, at))) return false;
  return !(policy.forbiddenPeriods ?? []).some((p) => periodAdmits(p, at));
}

/**
 * The type on the configuration registry. Its routes are its own (routes.ts: the spec's list answers 204
 * and SecAuth001 differently from the standard set); everything else — validation, -002…-005, events,
 * export/import, the cookbook, reference checks — is the registry's.
 */
export function executionPolicyType(): ConfigObjectType {
  return {
    type: 'execution-policy',
    title: 'Execution policies',
    noun: 'execution policy',
    exportKey: 'executionPolicies',
    description: 'When automation may act: authorized and forbidden periods (dates, weeks, week days, times of day, UTC).',
    basePath: '/api/v1/automation/executions/',
    tag: 'automation',
    section: 'automation',
    errorFamily: 'EXECUTION-POLICY',
    routes: 'own',
    update: 'replace',
    properties: {
      name: objectName,
      description: { anyOf: [description, { type: 'null' }] },
      authorizedPeriods: { anyOf: [periods, { type: 'null' }] },
      forbiddenPeriods: { anyOf: [periods, { type: 'null' }] },
    },
    required: ['name'],
    hooks: {
      normalize: (object: ConfigObject) => {
        const out: ConfigObject = { name: object.name };
        if (typeof object.description === 'string') out.description = object.description;
        if (Array.isArray(object.authorizedPeriods)) out.authorizedPeriods = normalizePeriods(object.authorizedPeriods);
        if (Array.isArray(object.forbiddenPeriods)) out.forbiddenPeriods = normalizePeriods(object.forbiddenPeriods);
        return out;
      },
      validate: (object) => periodProblem(object as unknown as ExecutionPolicy),
    },
  };
}
