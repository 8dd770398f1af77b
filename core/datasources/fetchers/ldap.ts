import { Client, InvalidCredentialsError, NoSuchObjectError, SizeLimitExceededError, TimeLimitExceededError } from 'ldapts';
import { FetchFailure } from '../errors.js';
import type { FetchBounds, FetchSecret, LdapSettings } from '../model.js';

/**
 * An LDAP datasource: bind (as `bindDn`, or the credential's login, with its password; anonymous without a
 * credential), one search under `baseDn`, each entry a record `{dn, <attribute>: value | [values]}`. The
 * server is asked for at most maxRecords + 1 entries, so more than maxRecords fails the fetch instead of
 * silently cutting the data a rule reads.
 */
export async function fetchLdap(settings: LdapSettings, secret: FetchSecret | null, bounds: FetchBounds): Promise<unknown[]> {
  const host = new URL(settings.url).host;
  const client = new Client({ url: settings.url, timeout: bounds.timeoutMs, connectTimeout: bounds.timeoutMs, strictDN: false });
  const bindDn = settings.bindDn ?? secret?.login;
  try {
    if (secret && bindDn) {
      try {
        await client.bind(bindDn, secret.password ?? '');
      } catch (err) {
        if (err instanceof InvalidCredentialsError) throw new FetchFailure(`${host} refused the bind as "${bindDn}" (invalid credentials)`);
        throw err;
      }
    }
    const { searchEntries } = await client.search(settings.baseDn, {
      scope: settings.scope ?? 'sub',
      filter: settings.filter ?? '(objectClass=*)',
      ...(settings.attributes?.length ? { attributes: settings.attributes } : {}),
      sizeLimit: bounds.maxRecords + 1,
      timeLimit: Math.max(1, Math.ceil(bounds.timeoutMs / 1000)),
    });
    return searchEntries.map((entry) => ({ ...entry }));
  } catch (err) {
    if (err instanceof FetchFailure) throw err;
    if (err instanceof SizeLimitExceededError) throw new FetchFailure(`${host} answered more than ${bounds.maxRecords} records (maxRecords)`);
    if (err instanceof TimeLimitExceededError) throw new FetchFailure(`${host}: the search exceeded its time limit`);
    if (err instanceof NoSuchObjectError) throw new FetchFailure(`${host}: the base DN "${settings.baseDn}" does not exist`);
    throw new FetchFailure(`${host}: ${describe(err as Error & { code?: string })}`);
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

/** A connection or protocol failure in a few words (ldapts' messages may quote the request; codes do not). */
function describe(err: Error & { code?: string | number }): string {
  if (typeof err.code === 'string' && /^E[A-Z]+$/.test(err.code)) return err.code;
  if (/timeout/i.test(err.message)) return 'no answer in time';
  return err.message.split('\n')[0]!.slice(0, 200);
}
