/**
 * A kernel that runs link report tasks for the report tests: a real SMTP server (the scheduler report tests'
 * sink), two seeded certificates, and helpers to save a report task and run it through the task routes.
 */
import type { LightMyRequestResponse } from 'fastify';
import type { Kernel } from '../../../core/kernel.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { seedInventory } from '../../helpers/inventory-seed.js';
import { until } from '../../helpers/until.js';
import { SMTP_PASSWORD, SMTP_USER, startSmtpSink, type SmtpSink } from '../../fixtures/channels/smtp.js';

export type Json = Record<string, unknown>;
export const PUBLIC_BASE = 'https://certwright.example.com';
/** The link a message carries: the public base, /reports/, a uuid. */
export const LINK = /https:\/\/certwright\.example\.com\/reports\/([0-9a-f-]{36})/;

export const LINK_TASK = {
  name: 'expiring',
  type: 'report',
  cron: '0 0 8 * * ?',
  enabled: true,
  reportType: 'link_email',
  retentionPeriod: '7 days',
  recipients: [{ type: 'static', email: 'pki-team@example.com' }],
  from: 'horizon@example.com',
  title: 'Expiring certificates',
  isHtml: false,
  hqlType: 'hcql',
  hqlQuery: 'valid.until before 30d and status is valid',
  hqlFields: ['dn', 'notAfter', 'team'],
  hqlSortedBy: [{ element: 'notAfter', order: 'Asc' }],
};

export interface ReportKernel {
  kernel: Kernel;
  smtp: SmtpSink;
  certs: Awaited<ReturnType<typeof seedInventory>>;
  /** Calls as the administrator. */
  admin: (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) => Promise<LightMyRequestResponse>;
  /** Runs a task now (GET :key/run) and answers its result once its lastFinished moved. */
  run: (task: string) => Promise<{ status: string; summary: string; details?: Json }>;
}

export async function reportKernel(t: { teardown(fn: () => unknown): void }): Promise<ReportKernel> {
  const smtp = await startSmtpSink(t);
  const kernel = await bootKernel(t, {
    scheduler: { processEveryMs: 50 },
    pki: { publicBaseUrl: `${PUBLIC_BASE}/` },
    plugins: {
      instances: {
        'trigger-email': [{ name: 'main', config: { host: '127.0.0.1', port: smtp.port, starttls: 'never', user: SMTP_USER, password: SMTP_PASSWORD, connectionTimeoutMs: 3000, greetingTimeoutMs: 3000, socketTimeoutMs: 5000 } }],
      },
    },
  });
  const admin: ReportKernel['admin'] = (method, url, payload) =>
    kernel.app.inject({ method, url, headers: { host: 'localhost', ...ADMIN_HEADERS, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const certs = await seedInventory(kernel, [
    { name: 'soon', subject: 'CN=soon.example.com', issuer: 'acme', key: 'ec', notBefore: -10, notAfter: 10, input: { team: 'pki' } },
    { name: 'later', subject: 'CN=later.example.com', issuer: 'acme', key: 'ec', notBefore: -10, notAfter: 200 },
  ]);
  const task = async (name: string) => (await admin('GET', `/api/v1/scheduler/tasks/${name}`)).json() as Json;
  const run: ReportKernel['run'] = async (name) => {
    const before = (await task(name)).lastFinished;
    const started = await admin('GET', `/api/v1/scheduler/tasks/${name}/run`);
    if (started.statusCode !== 202) throw new Error(`run ${name}: ${started.statusCode} ${started.body}`);
    await until(`the run of ${name}`, async () => {
      const finished = (await task(name)).lastFinished;
      return finished !== null && finished !== before;
    });
    return (await task(name)).lastResult as { status: string; summary: string; details?: Json };
  };
  return { kernel, smtp, certs, admin, run };
}
