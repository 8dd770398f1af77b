import { generateKeyPairSync } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DeepPartial, CertwrightConfig } from '../../../core/config/index.js';
import type { Kernel } from '../../../core/kernel.js';
import { selfSignedCertificate } from '../../../core/pki/issue/self-signed.js';
import { toPem } from '../../../core/pki/input.js';
import { triggerRuntimeOf } from '../../../core/triggers/index.js';
import type { TriggerRuntime } from '../../../core/triggers/runtime.js';
import type { CertificateObject } from '../../../core/inventory/types.js';
import { ADMIN_HEADERS, bootKernel, type TestContext } from '../../helpers/kernel.js';

/** Helpers of the trigger tests: a kernel with the `fixture` channel, certificates, triggers. */

export const DAY = 86_400_000;
export const FIXTURE_PLUGIN = resolve(dirname(fileURLToPath(import.meta.url)), '../../fixtures/plugins/trigger-fixture');

interface FixtureCall {
  event: import('@certwright/sdk').CertwrightEvent;
  target: Record<string, unknown>;
  at: number;
}
/** What the fixture channel recorded for a target key (see the fixture's index.ts). */
export function fixtureRecord(key: string): { calls: FixtureCall[]; delivered: FixtureCall[] } {
  const registry = ((globalThis as Record<symbol, unknown>)[Symbol.for('certwright.test.trigger-fixture')] ??= new Map()) as Map<string, { calls: FixtureCall[]; delivered: FixtureCall[] }>;
  let r = registry.get(key);
  if (!r) registry.set(key, (r = { calls: [], delivered: [] }));
  return r;
}

let keySeq = 0;
/** A target key no other test uses (the fixture's registry is process-wide). */
export const uniqueKey = (what: string): string => `${what}-${process.pid}-${++keySeq}-${Math.random().toString(36).slice(2, 8)}`;

/**
 * A kernel with the fixture channel. `manual`: the scheduler is off, the test drives dispatch and
 * delivery through the runtime; otherwise jobs poll fast and appends nudge the dispatcher.
 */
export async function bootTriggers(t: TestContext, overrides: DeepPartial<CertwrightConfig> = {}, manual = false): Promise<{ kernel: Kernel; runtime: TriggerRuntime }> {
  const kernel = await bootKernel(t, {
    plugins: { paths: [FIXTURE_PLUGIN] },
    scheduler: { enabled: !manual, processEveryMs: 100 },
    ...overrides,
    triggers: {
      dispatchEveryMs: 200,
      delivery: { retries: 3, initialDelayMs: 100, maxDelayMs: 1000, timeoutMs: 2000 },
      expiryScan: { every: '1 hour' },
      ...(overrides.triggers ?? {}),
    },
  });
  return { kernel, runtime: triggerRuntimeOf(kernel.app)! };
}

const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
/** A self-signed certificate for `cn` expiring in `days` days. */
export function pemOf(cn: string, days = 365): string {
  const now = Date.now();
  return toPem(selfSignedCertificate(key, { subject: `CN=${cn},O=Trigger Tests`, sans: [{ sanType: 'DNSNAME', value: `${cn}.example` }], notBefore: Math.min(now - DAY, now + (days - 10) * DAY), notAfter: now + days * DAY }));
}

/** Imports a certificate through the API (which raises CERTIFICATE-IMPORTED). */
export async function importCertificate(kernel: Kernel, cn: string, extra: Record<string, unknown> = {}, days = 365): Promise<CertificateObject> {
  const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/', headers: ADMIN_HEADERS, payload: { certificate: pemOf(cn, days), ...extra } });
  if (res.statusCode !== 201) throw new Error(`import ${cn}: ${res.statusCode} ${res.body}`);
  return res.json() as CertificateObject;
}

/** Creates a trigger through the API; throws unless 201. */
export async function createTrigger(kernel: Kernel, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/triggers/', headers: ADMIN_HEADERS, payload: body });
  if (res.statusCode !== 201) throw new Error(`create trigger: ${res.statusCode} ${res.body}`);
  return res.json() as Record<string, unknown>;
}

/** Dispatch then deliver until nothing is due (manual kernels). */
export async function runOnce(runtime: TriggerRuntime): Promise<void> {
  await runtime.dispatcher.dispatch();
  await runtime.worker.drain(() => false);
}
