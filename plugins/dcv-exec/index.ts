import { definePlugin } from '@certwright/sdk';
import { execProvisioner, type ExecConfig } from './src/provisioner.js';

/** DCV provisioner type `exec`: a program the administrator configures writes and removes the records. */
export default definePlugin({
  register(ctx) {
    ctx.registries.dcvProvisioners.register('exec', (instance) => execProvisioner(ctx, instance.name, instance.config as unknown as ExecConfig));
  },
});
