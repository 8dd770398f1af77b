import { PermanentError, type CredentialsFacade, type ResolvedCredential } from '@certwright/sdk';
import type { ConfigRegistry } from './registry.js';
import { usableCredential } from './types/credentials.js';

const secretValue = (field: unknown): string | undefined => {
  const value = (field as { value?: unknown } | undefined)?.value;
  return typeof value === 'string' ? value : undefined;
};

/**
 * ctx.credentials for plugins: the registry's credential read at the time of use (so a PUT rotates it
 * for every user at once), flattened from Horizon's wire shape (`password: {value}`, `store: {…}`).
 */
export function credentialsFacade(registry: ConfigRegistry): CredentialsFacade {
  return {
    async resolve(name, use) {
      const object = await registry.resolve('credential', use.tenant ?? 'default', name);
      const usable = usableCredential(object, name, use.kind, use.target);
      if (!usable.ok) throw new PermanentError(`credential ${usable.reason}`);
      const c = usable.credential;
      const store = (c.store ?? {}) as { certificate?: string; publicKey?: string; value?: string };
      const out: ResolvedCredential = { name, type: c.type as ResolvedCredential['type'] };
      if (typeof c.login === 'string') out.login = c.login;
      const password = secretValue(c.password);
      if (password !== undefined) out.password = password;
      const secret = secretValue(c.secret);
      if (secret !== undefined) out.secret = secret;
      if (typeof store.value === 'string') out.privateKey = store.value;
      if (typeof store.certificate === 'string') out.certificate = store.certificate;
      if (typeof store.publicKey === 'string') out.publicKey = store.publicKey;
      return out;
    },
  };
}
