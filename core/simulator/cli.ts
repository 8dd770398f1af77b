import { writeFileSync } from 'node:fs';
import { DEFAULT_RENEW_BEFORE, DEFAULT_YEARS } from './defaults.js';
import type { Knex } from 'knex';
import type { ValidityStep } from '../grading/cabf.js';
import { ProblemError } from '../errors/index.js';
import { CERTIFICATE_LANGUAGE } from '../inventory/language.js';
import { parseQuery, type QueryNode } from '../query/index.js';
import { FORMATS, formatReport, type Format } from './format.js';
import { countInventory, readInventory } from './inventory.js';
import { progressBar } from './progress.js';
import { scheduleNamed, scheduleNames } from './schedules.js';
import { RenewalSimulation, type SimulationResult } from './simulate.js';

/** A bad flag: one line on stderr and exit 2, before any database connection. */
export class SimulatorUsageError extends Error {}

/** The flags as commander hands them (strings). */
export interface SimulateFlags {
  schedule?: string;
  from?: string;
  years?: string;
  renewBefore?: string;
  query?: string;
  format?: string;
  output?: string;
}

export interface SimulateOptions {
  scheduleName: string;
  schedule: readonly ValidityStep[];
  fromYear: number;
  years: number;
  renewBefore: number;
  query: string | null;
  ast: QueryNode;
  format: Format;
  output: string | null;
}

const MAX_YEARS = 50;

function integer(text: string, flag: string, min: number, max: number): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < min || Number(text) > max) throw new SimulatorUsageError(`${flag} must be a whole number from ${min} to ${max}, not "${text}"`);
  return Number(text);
}

/** A share of the validity: 0.33, 1/3, or `ari` (renewal two thirds into the validity, as ARI suggests). */
function share(text: string): number {
  const t = text.trim().toLowerCase();
  const fraction = /^(\d+)\/(\d+)$/.exec(t);
  const value = t === 'ari' ? 1 / 3 : fraction ? Number(fraction[1]) / Number(fraction[2]) : /^\d*\.?\d+$/.test(t) ? Number(t) : NaN;
  if (!(value > 0 && value < 1)) throw new SimulatorUsageError(`--renew-before must be a share of the validity between 0 and 1 (0.33, 1/3 or ari), not "${text}"`);
  return value;
}

/** The flags checked and read; `now` gives the default first year (the current one, UTC). */
export function parseSimulateFlags(flags: SimulateFlags, now: number): SimulateOptions {
  const scheduleName = flags.schedule ?? 'cabf';
  const schedule = scheduleNamed(scheduleName);
  if (!schedule) throw new SimulatorUsageError(`unknown --schedule "${scheduleName}" (known: ${scheduleNames().join(', ')})`);
  const format = (flags.format ?? 'table') as Format;
  if (!FORMATS.includes(format)) throw new SimulatorUsageError(`unknown --format "${flags.format}" (one of ${FORMATS.join(', ')})`);
  const query = flags.query === undefined || flags.query.trim() === '' ? null : flags.query;
  let ast: QueryNode;
  try {
    ast = parseQuery(query, CERTIFICATE_LANGUAGE);
  } catch (err) {
    if (!(err instanceof ProblemError)) throw err;
    throw new SimulatorUsageError(`--query: ${err.message}`);
  }
  return {
    scheduleName,
    schedule,
    fromYear: flags.from === undefined ? new Date(now).getUTCFullYear() : integer(flags.from, '--from', 1970, 9999 - MAX_YEARS),
    years: flags.years === undefined ? DEFAULT_YEARS : integer(flags.years, '--years', 1, MAX_YEARS),
    renewBefore: flags.renewBefore === undefined ? DEFAULT_RENEW_BEFORE : share(flags.renewBefore),
    query,
    ast,
    format,
    output: flags.output ?? null,
  };
}

/** Reads the inventory page by page into the simulation, with a progress bar on a terminal's stderr. */
/** `coveredByPolicy`: the ids automation policies cover (core/automation idsCoveredByPolicies), counted as automated. */
export async function simulateInventory(knex: Knex, tenant: string, options: SimulateOptions, progressTo: NodeJS.WriteStream = process.stderr, coveredByPolicy: ReadonlySet<string> = new Set()): Promise<SimulationResult> {
  const simulation = new RenewalSimulation(options);
  const selection = { knex, tenant, query: options.ast, start: simulation.start, now: Date.now() };
  // Counting costs a query: only a terminal shows the bar.
  const progress = progressBar(progressTo, progressTo.isTTY ? await countInventory(selection) : 0, 'simulating');
  let done = 0;
  for await (const page of readInventory(selection)) {
    for (const cert of page) simulation.add(coveredByPolicy.has(cert.id) ? { ...cert, coveredByPolicy: true } : cert);
    done += page.length;
    progress.update(done);
  }
  progress.finish();
  return simulation.result();
}

/** The report in the chosen format, to `--output` or stdout. */
export function writeReport(result: SimulationResult, options: SimulateOptions, stdout: NodeJS.WritableStream = process.stdout): void {
  const text = formatReport(result, { schedule: options.scheduleName, query: options.query }, options.format);
  if (options.output === null) {
    stdout.write(text);
    return;
  }
  try {
    writeFileSync(options.output, text);
  } catch (err) {
    throw new SimulatorUsageError(`cannot write ${options.output}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
