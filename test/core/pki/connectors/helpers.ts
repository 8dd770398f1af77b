import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import type { CertwrightConfig, DeepPartial } from '../../../../core/config/index.js';
import type { Kernel } from '../../../../core/kernel.js';
import { pkiConnectorsOf } from '../../../../core/pki/connectors/index.js';
import type { FinalIssue, FinalRevoke } from '../../../../core/pki/connectors/types.js';
import { ADMIN_HEADERS, bootKernel, type TestContext } from '../../../helpers/kernel.js';
import type { FakeSlot, FakeStep } from '../../../fixtures/pki-connectors/fake-connectors/index.js';

/** Helpers of the PKI connector tests: kernels with the fake connector plugin, scripts, completion records. */

export const FAKE_PLUGIN = resolve(dirname(fileURLToPath(import.meta.url)), '../../../fixtures/pki-connectors/fake-connectors');

let seq = 0;
/** A registry key (and connector name part) no other test uses: the fake's registry is process-wide. */
export const uniqueKey = (what: string): string => `${what}-${process.pid}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

/** The fake's slot of a key (script, calls, configs) — see the fake's index.ts. */
export function fakeSlot(key: string): FakeSlot {
  const registry = ((globalThis as Record<symbol, unknown>)[Symbol.for('certwright.test.fake-pki-connectors')] ??= new Map()) as Map<string, FakeSlot>;
  let s = registry.get(key);
  if (!s) registry.set(key, (s = { script: [], calls: [], configs: [], issued: new Map() }));
  return s;
}

export const script = (key: string, ...steps: FakeStep[]): void => void fakeSlot(key).script.splice(0, Infinity, ...steps);

/** Config of a kernel with the fake connectors; `manual`: the scheduler is off (the test drives the queue). */
export function fakeConfig(manual = false, overrides: DeepPartial<CertwrightConfig> = {}): DeepPartial<CertwrightConfig> {
  return {
    plugins: { paths: [FAKE_PLUGIN] },
    scheduler: { enabled: !manual, processEveryMs: 100 },
    ...overrides,
    pki: { queue: { pollEveryMs: 300, leaseMs: 5000 }, bootstrap: { localCa: false, keyType: 'ec-secp256r1' }, ...(overrides.pki ?? {}) },
  };
}

export async function bootFake(t: TestContext, manual = false, overrides: DeepPartial<CertwrightConfig> = {}): Promise<Kernel> {
  return bootKernel(t, fakeConfig(manual, overrides));
}

export const moduleOf = (kernel: Kernel) => pkiConnectorsOf(kernel.app)!;

/** Creates a connector through the API; throws unless 201. */
export async function createConnector(kernel: Kernel, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/pki/connectors/', headers: ADMIN_HEADERS, payload: body });
  if (res.statusCode !== 201) throw new Error(`create connector: ${res.statusCode} ${res.body}`);
  return res.json() as Record<string, unknown>;
}

export async function createQueue(kernel: Kernel, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/pki/queues/', headers: ADMIN_HEADERS, payload: body });
  if (res.statusCode !== 201) throw new Error(`create queue: ${res.statusCode} ${res.body}`);
  return res.json() as Record<string, unknown>;
}

export interface Completion {
  tenant: string;
  requestId: string;
  outcome: FinalIssue | FinalRevoke;
  operation: 'issue' | 'revoke';
}

/**
 * Completion handlers that write each outcome into a table of their own (created here), inside the
 * gateway's transaction, keyed by request id: a second completion of one request would fail loudly on
 * the primary key, and a rolled-back one leaves nothing. Answers a reader of what was recorded.
 */
export async function recordCompletions(kernels: Kernel[]): Promise<() => Promise<Completion[]>> {
  const knex: Knex = kernels[0]!.db.knex;
  const table = `test_pki_completions`;
  if (!(await knex.schema.hasTable(table))) {
    await knex.schema.createTable(table, (t) => {
      t.string('request_id', 64).primary();
      t.string('tenant', 64).notNullable();
      t.string('operation', 16).notNullable();
      t.text('outcome').notNullable();
    });
  }
  for (const kernel of kernels) {
    moduleOf(kernel).gateway.setHandlers({
      issued: async (trx, tenant, requestId, outcome) => {
        await trx(table).insert({ request_id: requestId, tenant, operation: 'issue', outcome: JSON.stringify(outcome) });
      },
      revoked: async (trx, tenant, requestId, outcome) => {
        await trx(table).insert({ request_id: requestId, tenant, operation: 'revoke', outcome: JSON.stringify(outcome) });
      },
    });
  }
  return async () =>
    ((await knex(table).select()) as { request_id: string; tenant: string; operation: 'issue' | 'revoke'; outcome: string }[]).map((r) => ({
      tenant: r.tenant,
      requestId: r.request_id,
      operation: r.operation,
      outcome: JSON.parse(r.outcome) as FinalIssue | FinalRevoke,
    }));
}

/** A 24-hex request id. */
export const requestId = (): string => [...crypto.getRandomValues(new Uint8Array(12))].map((b) => b.toString(16).padStart(2, '0')).join('');
