import { definePlugin, type AuthenticationInput, type IdentityProvider, type LocalAccount, type Principal } from '@certwright/sdk';

interface LocalConfig {
  allowBasic?: boolean;
}

const header = (input: AuthenticationInput, name: string): string | undefined => {
  const v = input.headers[name];
  return typeof v === 'string' ? v : undefined;
};

/** The identifier and secret a request presents: X-API-ID + X-API-KEY, else HTTP Basic when allowed. */
function credentials(input: AuthenticationInput, allowBasic: boolean): { identifier: string; secret: string } | null {
  const identifier = header(input, 'x-api-id');
  const secret = header(input, 'x-api-key');
  if (identifier && secret) return { identifier, secret };
  const authorization = header(input, 'authorization');
  if (allowBasic && authorization && /^basic /i.test(authorization)) {
    const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) return { identifier: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
  }
  return null;
}

/** Identity provider type `local`: the platform's local accounts. */
export default definePlugin({
  register(ctx) {
    ctx.registries.identityProviders.register('local', (instance): IdentityProvider => {
      const config = instance.config as LocalConfig;
      const allowBasic = config.allowBasic !== false;
      const principal = ({ secretChangedAt, ...account }: LocalAccount, tenant: string): Principal => ({
        ...account,
        ...(secretChangedAt !== undefined ? { credentialsChangedAt: secretChangedAt } : {}),
        identityProviderName: instance.name,
        identityProviderType: 'local',
        tenant,
      });
      return {
        async authenticate(input) {
          const presented = credentials(input, allowBasic);
          if (!presented) return null;
          const account = await ctx.localAccounts.verify(input.tenant, presented.identifier, presented.secret);
          return account ? principal(account, input.tenant) : null;
        },
        async lookup(identifier, tenant) {
          const account = await ctx.localAccounts.find(tenant, identifier);
          return account ? principal(account, tenant) : null;
        },
      };
    });
  },
});
