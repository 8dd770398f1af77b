/**
 * protocol-est: EST (RFC 7030, RFC 8951) on every profile with `protocols.est.enabled`, issuing through
 * ctx.enrollment (the request workflow).
 */
import { definePlugin, type PluginContext } from '@certwright/sdk';
import { registerEstRoutes } from './src/routes.js';
import { EstService } from './src/service.js';

interface EstConfig {
  defaultProfile?: string | null;
  retryAfterSeconds?: number;
  maxBodyBytes?: number;
}

export default definePlugin({
  register(ctx: PluginContext) {
    const config = (ctx.instances[0]?.config ?? {}) as EstConfig;
    const service = new EstService({
      enrollment: ctx.enrollment,
      localAccounts: ctx.localAccounts,
      db: ctx.db,
      events: ctx.events,
      now: () => ctx.clock.now(),
      retryAfterSeconds: config.retryAfterSeconds ?? 60,
    });
    ctx.registries.protocols.register({
      registerRoutes: (scope) => registerEstRoutes(scope, { service, defaultProfile: config.defaultProfile === undefined ? 'default' : config.defaultProfile, maxBodyBytes: config.maxBodyBytes ?? 65_536 }),
    });
  },
});
