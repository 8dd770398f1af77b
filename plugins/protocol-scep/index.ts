/**
 * protocol-scep: SCEP (RFC 8894) on every profile with `protocols.scep.enabled`, issuing through
 * ctx.enrollment (the request workflow), with a per-profile RA certificate: the SDK's SCEP server on /scep and
 * the NDES paths /certsrv and /certSrv.
 */
import { definePlugin, type PluginContext } from '@certwright/sdk';
import { addScepBodyParser, RaStore, registerScepRoutes, ScepService } from '@certwright/sdk/scep-server';

interface ScepConfig {
  maxBodyBytes?: number;
}

export default definePlugin({
  register(ctx: PluginContext) {
    const config = (ctx.instances[0]?.config ?? {}) as ScepConfig;
    const now = () => ctx.clock.now();
    const ra = new RaStore({ protocol: 'scep', table: 'scep_ra', db: ctx.db, enrollment: ctx.enrollment, pki: ctx.pki, secrets: ctx.secrets, now });
    const service = new ScepService({ protocol: 'scep', transactionsTable: 'scep_transactions', enrollment: ctx.enrollment, localAccounts: ctx.localAccounts, db: ctx.db, events: ctx.events, ra, now });
    const maxBodyBytes = config.maxBodyBytes ?? 131_072;
    ctx.registries.protocols.register({
      registerRoutes: (scope) => {
        addScepBodyParser(scope, maxBodyBytes);
        registerScepRoutes(scope, { service, maxBodyBytes, paths: { pkiclient: ['/scep'], scepRa: ['/scep'], ndes: ['/certsrv', '/certSrv'] } });
      },
    });
  },
});
