import { definePlugin, type IdentityProvider } from '@certwright/sdk';
import { oidcProvider, type OidcConfig } from './src/oidc-login.js';

/**
 * Identity provider type `oidc`: a browser login through an OpenID Connect provider (SDK 1.10 InteractiveLogin).
 * The security core serves …/providers/:name/login and …/:name/callback around `start` and `finish`.
 */
export default definePlugin({
  register(ctx) {
    ctx.registries.identityProviders.register('oidc', (instance): IdentityProvider => oidcProvider(ctx, instance.name, instance.config as unknown as OidcConfig));
  },
});
