import { definePlugin } from '@certwright/sdk';
import { digicertProvider, type DigicertConfig } from './src/provider.js';

/** DCV provider type `digicert`: domain control proven to DigiCert CertCentral with its DNS TXT method (dns-txt-token). */
export default definePlugin({
  register(ctx) {
    ctx.registries.dcvProviders.register('digicert', (instance) => digicertProvider(ctx, instance.name, instance.config as unknown as DigicertConfig));
  },
});
