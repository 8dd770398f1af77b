import { randomBytes } from 'node:crypto';
import { definePlugin, type DcvChallenge, type DcvContext, type DcvProvider, type DnsRecord } from '@certwright/sdk';

interface DnsProviderConfig {
  label?: string;
  ttl?: number;
}

/** The persistent record's name and value (the CA/B Forum's dns-persist-01: issuer domain; accounturi=…). */
const PERSIST_LABEL = '_validation-persist';
const persistValue = (issuer: string, accountUri: string): string => `${issuer}; accounturi=${accountUri}`;

function needContext(context: DcvContext | undefined): DcvContext {
  if (!context) throw new Error('the dns provider runs inside a DCV policy (it writes through the policy\'s provisioner)');
  return context;
}

/**
 * Provider type `dns`: self-validation. The token is random per run (standard mode), so an old record proves
 * nothing; in persistent mode the record is the account binding itself, published once and checked each run.
 */
export default definePlugin({
  register(ctx) {
    ctx.registries.dcvProviders.register('dns', (instance): DcvProvider => {
      const config = instance.config as DnsProviderConfig;
      const label = config.label ?? '_acme-challenge';
      const ttl = config.ttl ?? 60;
      return {
        async prepare(domain, context): Promise<DcvChallenge> {
          const dcv = needContext(context);
          if (dcv.persist) {
            const fqdn = `${PERSIST_LABEL}.${domain}`;
            const present = await dcv.lookupTxt(fqdn);
            const written: DnsRecord[] = [];
            for (const issuer of dcv.persist.issuerDomainNames) {
              const value = persistValue(issuer, dcv.persist.accountUri);
              if (!present.includes(value)) written.push(await dcv.publish({ fqdn, type: 'TXT', value, ttl }));
            }
            return { domain, method: 'dns-persist-01', token: dcv.persist.accountUri, data: { fqdn, written } };
          }
          const token = randomBytes(32).toString('base64url');
          const record = await dcv.publish({ fqdn: `${label}.${domain}`, type: 'TXT', value: token, ttl });
          return { domain, method: 'dns-txt', token, data: { fqdn: `${label}.${domain}`, record } };
        },
        async verify(challenge, context) {
          const dcv = needContext(context);
          const values = await dcv.lookupTxt(String(challenge.data?.fqdn));
          if (challenge.method === 'dns-persist-01') {
            const wanted = (dcv.persist?.issuerDomainNames ?? []).map((issuer) => persistValue(issuer, challenge.token));
            return wanted.length > 0 && wanted.every((v) => values.includes(v)) ? 'valid' : 'pending';
          }
          return values.includes(challenge.token) ? 'valid' : 'pending';
        },
        async cleanUp(challenge, context) {
          const record = challenge.data?.record as DnsRecord | undefined;
          if (record && challenge.method === 'dns-txt') await needContext(context).unpublish(record);
        },
      };
    });
  },
});
