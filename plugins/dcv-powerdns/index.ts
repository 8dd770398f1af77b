import { definePlugin } from '@certwright/sdk';
import { powerDnsProvisioner, type PowerDnsConfig } from './src/provisioner.js';

/** DCV provisioner type `powerdns`: TXT records written through the PowerDNS Authoritative HTTP API. */
export default definePlugin({
  register(ctx) {
    ctx.registries.dcvProvisioners.register('powerdns', (instance) => powerDnsProvisioner(ctx, instance.name, instance.config as unknown as PowerDnsConfig));
  },
});
