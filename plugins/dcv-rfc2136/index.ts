import { definePlugin } from '@certwright/sdk';
import { rfc2136Provisioner, type Rfc2136Config } from './src/provisioner.js';

/** DCV provisioner type `rfc2136`: TXT records written by RFC 2136 dynamic update, signed with TSIG (RFC 8945). */
export default definePlugin({
  register(ctx) {
    ctx.registries.dcvProvisioners.register('rfc2136', (instance) => rfc2136Provisioner(ctx, instance.name, instance.config as unknown as Rfc2136Config));
  },
});
