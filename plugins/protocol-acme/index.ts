/**
 * protocol-acme: an ACME server (RFC 8555) on every profile with `protocols.acme.enabled`. Issuance goes
 * through ctx.enrollment (the request workflow); validation runs as the `acme-validate` job.
 */
import { definePlugin, type PluginContext } from '@certwright/sdk';
import { eabKeyType, eabPolicyType } from './src/eab-types.js';
import { NonceStore } from './src/nonces.js';
import { registerAdminRoutes } from './src/admin-routes.js';
import { registerAcmeRoutes } from './src/routes.js';
import { AcmeServer } from './src/server.js';
import { AcmeStore } from './src/store.js';
import { defineValidationJob } from './src/validate-job.js';
import type { ValidationSettings } from './src/validation.js';

interface AcmeConfig {
  nonceLifetimeSeconds?: number;
  orderLifetimeHours?: number;
  validation?: Partial<ValidationSettings> & { retries?: number; retryDelayMs?: number };
}

export default definePlugin({
  register(ctx: PluginContext) {
    const config = (ctx.instances[0]?.config ?? {}) as AcmeConfig;
    const skipValidation = validationSkipped();
    const now = () => ctx.clock.now();
    const store = new AcmeStore(ctx.db, now);
    const nonces = new NonceStore(ctx.db, now, (config.nonceLifetimeSeconds ?? 3600) * 1000);
    ctx.registries.configTypes.declare(eabPolicyType);
    ctx.registries.configTypes.declare(eabKeyType);
    if (skipValidation) ctx.logger.warn({}, 'ACME validation is SKIPPED (CERTWRIGHT_ACME_SKIP_VALIDATION, NODE_ENV=' + process.env.NODE_ENV + '): every challenge is valid');
    const server = new AcmeServer({ store, nonces, enrollment: ctx.enrollment, jobs: ctx.jobs, configObjects: ctx.configObjects, logger: ctx.logger, skipValidation, now, orderLifetimeMs: (config.orderLifetimeHours ?? 168) * 3_600_000 });
    const v = config.validation ?? {};
    defineValidationJob(ctx, store, {
      allowPrivateNetworks: v.allowPrivateNetworks ?? true,
      httpPort: v.httpPort ?? 80,
      tlsAlpnPort: v.tlsAlpnPort ?? 443,
      dnsServers: v.dnsServers ?? [],
      timeoutMs: v.timeoutMs ?? 10_000,
      retries: v.retries ?? 5,
      retryDelayMs: v.retryDelayMs ?? 5000,
    });
    ctx.registries.protocols.register({
      registerRoutes: (scope) => {
        registerAcmeRoutes(scope, { server, nonces, enrollment: ctx.enrollment, logger: ctx.logger });
        registerAdminRoutes(scope, { store, enrollment: ctx.enrollment });
      },
    });
  },
});

/**
 * The switch that makes every challenge valid at once, for benchmarks and tests that measure or exercise
 * everything but validation: CERTWRIGHT_ACME_SKIP_VALIDATION=1, honoured only with NODE_ENV=test or benchmark.
 * Set anywhere else, the plugin refuses to load (degraded, with this reason) rather than issue unvalidated.
 */
function validationSkipped(): boolean {
  if (process.env.CERTWRIGHT_ACME_SKIP_VALIDATION !== '1') return false;
  if (process.env.NODE_ENV === 'test' || process.env.NODE_ENV === 'benchmark') return true;
  throw new Error('CERTWRIGHT_ACME_SKIP_VALIDATION=1 is for tests and benchmarks only (NODE_ENV=test or benchmark): refusing to serve ACME without validation');
}
