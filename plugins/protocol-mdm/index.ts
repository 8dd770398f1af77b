/**
 * protocol-mdm: SCEP for managed fleets on every profile with `protocols.mdm.enabled` — the Intune flavour
 * (/intune/<profile>/…, challenges validated by Microsoft Intune, outcomes reported back) and the Jamf flavour
 * (/jamf/<profile>/…, one-time challenges by the mscep_admin page or Jamf's webhook) — both the SDK's SCEP
 * server with their own hooks, one RA per profile.
 */
import { definePlugin, egressPolicyFrom, type PluginContext } from '@certwright/sdk';
import { addScepBodyParser, RaStore, registerScepRoutes, ScepService } from '@certwright/sdk/scep-server';
import { IntuneClient } from './src/intune.js';
import { intuneHooks } from './src/intune-hooks.js';
import { registerJamfWebhook } from './src/jamf-webhook.js';

interface MdmConfig {
  maxBodyBytes?: number;
  intune?: { loginUrl?: string; graphUrl?: string; allowedHosts?: string[]; allowHttp?: boolean; allowPrivateNetworks?: boolean; timeoutMs?: number };
}

export default definePlugin({
  register(ctx: PluginContext) {
    const config = (ctx.instances[0]?.config ?? {}) as MdmConfig;
    const now = () => ctx.clock.now();
    const i = config.intune ?? {};
    const intune = new IntuneClient({
      http: ctx.http,
      policy: egressPolicyFrom({ allowedHosts: i.allowedHosts ?? ['login.microsoftonline.com', 'graph.microsoft.com', '*.manage.microsoft.com'], allowHttp: i.allowHttp ?? false, allowPrivateNetworks: i.allowPrivateNetworks ?? false, timeoutMs: i.timeoutMs ?? 10_000 }),
      endpoints: { loginUrl: (i.loginUrl ?? 'https://login.microsoftonline.com').replace(/\/+$/, ''), graphUrl: (i.graphUrl ?? 'https://graph.microsoft.com').replace(/\/+$/, '') },
      now,
    });
    const ra = new RaStore({ protocol: 'mdm', table: 'mdm_ra', db: ctx.db, enrollment: ctx.enrollment, pki: ctx.pki, secrets: ctx.secrets, now });
    const common = { protocol: 'mdm', transactionsTable: 'mdm_transactions', enrollment: ctx.enrollment, localAccounts: ctx.localAccounts, db: ctx.db, events: ctx.events, ra, now, onHookError: (err: unknown) => ctx.logger.warn({ err }, 'MDM notification failed') };
    const intuneService = new ScepService({ ...common, hooks: intuneHooks({ intune, credentials: ctx.credentials, enrollment: ctx.enrollment }) });
    const jamfService = new ScepService(common);
    const maxBodyBytes = config.maxBodyBytes ?? 131_072;
    ctx.registries.protocols.register({
      registerRoutes: (scope) => {
        addScepBodyParser(scope, maxBodyBytes);
        registerScepRoutes(scope, { service: intuneService, maxBodyBytes, paths: { pkiclient: ['/intune'], scepRa: ['/intune'] }, tag: 'MDM' });
        registerScepRoutes(scope, { service: jamfService, maxBodyBytes, paths: { ndes: ['/jamf'], scepRa: ['/jamf'] }, tag: 'MDM' });
        registerJamfWebhook(scope, { service: jamfService, localAccounts: ctx.localAccounts });
      },
    });
  },
});
