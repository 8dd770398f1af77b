import { definePlugin, type InstanceFactory, type PkiConnector, type PluginContext } from '@certwright/sdk';
import { LocalCaConnector } from './src/connector.js';

export { LocalCaConnector } from './src/connector.js';
export { readConfig, type LocalCaConfig } from './src/config.js';

/** The factory the kernel calls for each configured instance of type `local-ca`. */
export function localCaFactory(ctx: PluginContext): InstanceFactory<PkiConnector> {
  return (instance) => new LocalCaConnector(ctx, instance);
}

/** PKI connector `local-ca`: the embedded CA (root + issuing CA created on first use). */
export default definePlugin({
  register(ctx) {
    ctx.registries.pkiConnectors.register('local-ca', localCaFactory(ctx));
  },
});
