import { definePlugin, type InstanceFactory, type PkiConnector, type PluginContext } from '@certwright/sdk';
import { AcmeUpstreamConnector } from './src/connector.js';

export { AcmeUpstreamConnector, identifiersOf } from './src/connector.js';
export { readConfig, type AcmeUpstreamConfig } from './src/config.js';
export { reasonCode, REVOCATION_REASONS } from './src/revocation.js';

/** The factory the kernel calls for each configured instance of type `acme-upstream`. */
export function acmeUpstreamFactory(ctx: PluginContext): InstanceFactory<PkiConnector> {
  return (instance) => new AcmeUpstreamConnector(ctx, instance);
}

/** PKI connector `acme-upstream`: certificates from an upstream ACME CA (RFC 8555). */
export default definePlugin({
  register(ctx) {
    ctx.registries.pkiConnectors.register('acme-upstream', acmeUpstreamFactory(ctx));
  },
});
