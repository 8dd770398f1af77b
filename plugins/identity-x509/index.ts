import { CredentialsRefusedError, definePlugin, type AuthenticationInput, type ClientCertificate, type IdentityProvider, type PluginContext, type Principal } from '@certwright/sdk';
import { AUTHORIZATION_TYPE, authorizationType, couldGive, mapped, ordered } from './src/authorizations.js';
import { forwardedPem, isTrusted, proxyList } from './src/forwarded.js';

interface X509Config {
  forwardedHeader?: string;
  trustedProxies?: string[];
}

const one = (v: string | string[] | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

/** The request carries other credentials (an API key, HTTP Basic, a bearer token): those decide, not the certificate. */
const otherCredentials = (input: AuthenticationInput): boolean =>
  input.headers['x-api-id'] !== undefined || input.headers['x-api-key'] !== undefined || input.headers.authorization !== undefined;

/**
 * Identity provider type `x509`: a client certificate (the TLS connection's, or one a trusted reverse proxy
 * forwards in a header) checked by the platform (ctx.clientCertificates.verify) and mapped to a principal by the
 * first matching X509 authorization. Every refusal is a SEC-LOGIN-FAILURE event with its reason and a
 * CredentialsRefusedError, which the core answers 401 SEC-AUTH-006.
 */
export default definePlugin({
  register(ctx: PluginContext) {
    const certificates = ctx.clientCertificates;
    ctx.registries.configTypes.declare(authorizationType(certificates));

    ctx.registries.identityProviders.register('x509', (instance): IdentityProvider => {
      const config = instance.config as X509Config;
      const header = config.forwardedHeader?.toLowerCase();
      const proxies = proxyList(config.trustedProxies ?? []);
      const log = ctx.logger.child({ provider: instance.name });

      /** Writes the refusal (event and log); `failure` then refuses the login, `record` lets it go on. */
      const record = async (input: AuthenticationInput, reason: string, certificate?: ClientCertificate, extra: Record<string, unknown> = {}): Promise<void> => {
        const payload = {
          method: 'x509',
          provider: instance.name,
          reason,
          subjectDn: certificate?.subjectDn ?? null,
          serial: certificate?.serial ?? null,
          address: input.remoteAddress ?? null,
          ...extra,
        };
        log.info(payload, 'X509 login refused');
        try {
          await ctx.events.append({
            tenant: input.tenant,
            code: 'SEC-LOGIN-FAILURE',
            module: 'security',
            status: 'failure',
            principal: null,
            objectType: 'principal',
            objectId: certificate?.subjectDn ?? null,
            payload,
          });
        } catch (err) {
          log.error({ err }, 'could not record the failed X509 login event');
        }
      };
      const failure = async (input: AuthenticationInput, reason: string, certificate?: ClientCertificate, extra: Record<string, unknown> = {}): Promise<never> => {
        await record(input, reason, certificate, extra);
        throw new CredentialsRefusedError(`X509 login refused: ${reason}`);
      };

      const principal = (identifier: string, tenant: string, certificate?: ClientCertificate): Principal => ({
        identifier,
        ...(certificate?.emails[0] ? { email: certificate.emails[0] } : {}),
        identityProviderName: instance.name,
        identityProviderType: 'x509',
        tenant,
      });

      return {
        async authenticate(input) {
          if (otherCredentials(input)) return null;
          let pem = input.clientCertificatePem;
          let source: 'tls' | 'forwarded' = 'tls';
          const forwarded = header ? one(input.headers[header]) : undefined;
          if (forwarded !== undefined && forwarded.trim() !== '') {
            if (!isTrusted(proxies, input.connectionAddress)) {
              // Ignored (a TLS client certificate may still log in), but a certificate was presented: refused if nothing else.
              await record(input, 'forwarded-from-untrusted-address', undefined, { header, connectionAddress: input.connectionAddress ?? null });
              if (pem === undefined) throw new CredentialsRefusedError('X509 login refused: forwarded-from-untrusted-address');
            } else {
              const decoded = forwardedPem(forwarded);
              if (decoded === null) return failure(input, 'unreadable', undefined, { header, detail: 'the forwarded header holds no PEM certificate' });
              pem = decoded;
              source = 'forwarded';
            }
          }
          if (pem === undefined) return null;

          const verdict = await certificates.verify(pem, input.tenant);
          if (!verdict.ok) return failure(input, verdict.reason, verdict.certificate, { source, ...(verdict.detail ? { detail: verdict.detail } : {}) });
          const { certificate } = verdict;
          for (const authorization of ordered(await ctx.configObjects.list(AUTHORIZATION_TYPE, input.tenant))) {
            try {
              const identifier = await mapped(authorization, certificate, certificates, input.tenant);
              if (identifier !== null) return principal(identifier, input.tenant, certificate);
            } catch (err) {
              log.warn({ authorization: authorization.name, err: (err as Error).message }, 'X509 authorization could not be evaluated; skipped');
            }
          }
          return failure(input, 'no-authorization', certificate, { source });
        },

        /** A session stays good while an enabled authorization can still give its identifier. */
        async lookup(identifier, tenant) {
          const authorizations = ordered(await ctx.configObjects.list(AUTHORIZATION_TYPE, tenant));
          return authorizations.some((a) => couldGive(a, identifier)) ? principal(identifier, tenant) : null;
        },
      };
    });
  },
});
