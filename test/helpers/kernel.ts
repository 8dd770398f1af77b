import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loadConfig, type CertwrightConfig, type DeepPartial } from '../../core/config/index.js';
import { Kernel } from '../../core/kernel.js';
import { REDACT_PATHS } from '../../core/log/logger.js';
import { freshDatabaseUrl } from './database.js';

export interface TestContext {
  teardown(fn: () => unknown): void;
}

export function tempDir(t: TestContext, prefix = 'cw-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Captures every log line the kernel writes, as text, for assertions (and secret greps). */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }
}

/** The secret of the `administrator` account in test kernels (testConfig sets security.adminSecret). */
export const TEST_ADMIN_SECRET = 'Test-Admin-Secret-1!';
export const ADMIN_HEADERS = { 'x-api-id': 'administrator', 'x-api-key': TEST_ADMIN_SECRET } as const;

type Tree = Record<string, unknown>;
const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);
function deepMerge(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isTree(v) && isTree(out[k]) ? deepMerge(out[k] as Tree, v) : v;
  return out;
}

/** Config as the kernel would load it with no environment, plus a temp data dir and the test database. */
export async function testConfig(t: TestContext, overrides: DeepPartial<CertwrightConfig> = {}): Promise<CertwrightConfig> {
  const dataDir = tempDir(t);
  const url = await freshDatabaseUrl(t);
  // A short job lock lifetime: Agenda keeps a liveness timer of half of it per job run, which would
  // otherwise hold a finished test process open for minutes.
  // Cheap argon2id (tests hash many secrets; the production cost is measured in bench/auth) and a
  // known administrator secret (TEST_ADMIN_SECRET).
  const base = {
    dataDir,
    database: { url },
    log: { level: 'warn' },
    scheduler: { lockLifetimeMs: 2000 },
    security: { adminSecret: TEST_ADMIN_SECRET, argon2: { memoryKiB: 1024, iterations: 1 } },
    // No first-start local CA and `default` profile (and their events): the enrollment tests ask for them
    // with ENROLLMENT_BOOTSTRAP.
    pki: { bootstrap: { localCa: false } },
    // No HTTPS listener on the fixed default port (test files run in parallel); the TLS tests ask for one.
    server: { tls: { port: null } },
  };
  // Deep, so that overriding database.pool keeps the test database URL.
  return loadConfig({ env: {}, overrides: deepMerge(base, overrides as Tree) as DeepPartial<CertwrightConfig> });
}

/** Overrides that restore the product's first start: connector `local-ca` and profile `default`. */
export const ENROLLMENT_BOOTSTRAP = { pki: { bootstrap: { localCa: true } } } as const;

/** Boots a kernel (no port opened; use app.inject) and stops it at teardown. */
export async function bootKernel(
  t: TestContext,
  overrides: DeepPartial<CertwrightConfig> = {},
  options: { capture?: LogCapture; config?: CertwrightConfig; clock?: () => number } = {},
): Promise<Kernel> {
  const config = options.config ?? (await testConfig(t, overrides));
  const capture = options.capture ?? new LogCapture();
  const logger = pino({ level: config.log.level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, capture);
  const kernel = await Kernel.boot({ config, logger, ...(options.clock ? { clock: options.clock } : {}) });
  t.teardown(() => kernel.stop());
  return kernel;
}
