import type { ClientCertificate, ClientCertificatesFacade, ConfigObjectType } from '@certwright/sdk';

export const AUTHORIZATION_TYPE = 'x509-authorization';

export interface Authorization {
  name: string;
  description?: string;
  priority?: number;
  enabled?: boolean;
  match: { subjectDn?: string; email?: string; upn?: string; query?: string };
  identifier: string;
}

const PLACEHOLDERS = ['cn', 'email', 'upn', 'dn'] as const;
const PLACEHOLDER = /\{(cn|email|upn|dn)\}/g;
const pattern = (description: string) => ({ type: 'string', minLength: 1, maxLength: 1000, description });

/**
 * X509 authorizations: which certificates log in as whom. A configuration collection of the plugin (the kernel
 * serves the standard set at basePath, under the identity-providers permission section).
 */
export function authorizationType(certificates: ClientCertificatesFacade): ConfigObjectType {
  return {
    type: AUTHORIZATION_TYPE,
    title: 'X509 authorizations',
    noun: 'X509 authorization',
    description:
      'Maps a client certificate that passed the X509 checks to a principal: the enabled authorizations are tried by priority (lowest first, then name) and the first whose match holds gives the identifier.',
    basePath: '/api/v1/security/identity/x509/authorizations/',
    tag: 'security',
    section: 'identity-providers',
    errorFamily: 'X509AUTH',
    exportKey: 'x509Authorizations',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 191, pattern: '^[A-Za-z0-9._@-]+$' },
      description: { type: 'string', maxLength: 1000 },
      priority: { type: 'integer', minimum: 0, maximum: 1000000, default: 100, description: 'Order of evaluation, lowest first (ties: by name); the first match wins' },
      enabled: { type: 'boolean', default: true },
      match: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        description: 'What the certificate must show; every field given must hold. Text fields compare case-insensitively, `*` matching any run of characters',
        properties: {
          subjectDn: pattern('The subject DN (RFC 4514, as the inventory shows it: `CN=alice,O=Example`)'),
          email: pattern('An rfc822Name of the subject alternative names (`*@example.com`)'),
          upn: pattern('A Microsoft UPN (otherName) of the subject alternative names'),
          query: pattern('A certificate query (the inventory\'s query language) the certificate must match; it must be in the inventory'),
        },
      },
      identifier: {
        type: 'string',
        minLength: 1,
        maxLength: 191,
        description: 'The principal identifier to log in as; `{cn}`, `{email}`, `{upn}` and `{dn}` take the certificate\'s values (`{email}`: the one matched, else the first)',
      },
    },
    required: ['name', 'match', 'identifier'],
    serverOwned: ['createdAt', 'updatedAt'],
    hooks: {
      normalize: (object) => ({ ...object, priority: object.priority ?? 100, enabled: object.enabled ?? true }),
      validate: (object) => {
        const match = object.match as Authorization['match'];
        if (match.query !== undefined) {
          const problem = certificates.queryProblem(match.query);
          if (problem) return `match.query: ${problem}`;
        }
        const identifier = object.identifier as string;
        const unknown = /\{([^}]*)\}/g;
        for (const m of identifier.matchAll(unknown)) {
          if (!(PLACEHOLDERS as readonly string[]).includes(m[1]!)) return `identifier: unknown placeholder {${m[1]}} (known: ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')})`;
        }
        return undefined;
      },
    },
  };
}

/** A `*` pattern as an anchored, case-insensitive regular expression. */
function glob(text: string): RegExp {
  return new RegExp(`^${text.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 'i');
}

const foldDn = (dn: string): string => dn.trim().replace(/\s*,\s*/g, ',').replace(/\s*=\s*/g, '=').replace(/\s+/g, ' ');

/** The common name of an RFC 4514 DN (its most specific CN). */
export function commonName(dn: string): string | undefined {
  const m = /(?:^|,)\s*CN=((?:\\.|[^,\\])*)/i.exec(dn);
  return m ? m[1]!.replace(/\\(.)/g, '$1') : undefined;
}

/** The authorizations in the order they are tried: enabled ones, lowest priority first, then by name. */
export function ordered(list: readonly Record<string, unknown>[]): Authorization[] {
  return (list as unknown as Authorization[])
    .filter((a) => a.enabled !== false)
    .sort((a, b) => (a.priority ?? 100) - (b.priority ?? 100) || a.name.localeCompare(b.name));
}

/**
 * The identifier the authorization gives the certificate, or null when its match does not hold (or a placeholder
 * of its identifier has no value in this certificate).
 */
export async function mapped(authorization: Authorization, certificate: ClientCertificate, certificates: ClientCertificatesFacade, tenant: string): Promise<string | null> {
  const { match } = authorization;
  let email = certificate.emails[0];
  let upn = certificate.upns[0];
  if (match.subjectDn !== undefined && !glob(foldDn(match.subjectDn)).test(foldDn(certificate.subjectDn))) return null;
  if (match.email !== undefined) {
    const re = glob(match.email);
    email = certificate.emails.find((e) => re.test(e));
    if (email === undefined) return null;
  }
  if (match.upn !== undefined) {
    const re = glob(match.upn);
    upn = certificate.upns.find((u) => re.test(u));
    if (upn === undefined) return null;
  }
  if (match.query !== undefined && !(await certificates.matchesQuery(certificate.thumbprint, match.query, tenant))) return null;
  const values: Record<(typeof PLACEHOLDERS)[number], string | undefined> = { cn: commonName(certificate.subjectDn), email, upn, dn: certificate.subjectDn };
  let missing = false;
  const identifier = authorization.identifier.replace(PLACEHOLDER, (_, name: (typeof PLACEHOLDERS)[number]) => {
    const value = values[name];
    if (value === undefined || value === '') missing = true;
    return value ?? '';
  });
  return missing || identifier.length === 0 || identifier.length > 191 ? null : identifier;
}

/** Whether `identifier` is one the authorization can give (its text, or its template with each placeholder as any text). */
export function couldGive(authorization: Authorization, identifier: string): boolean {
  const parts = authorization.identifier.split(PLACEHOLDER);
  // split with a capturing group alternates literal text and placeholder names.
  const source = parts.map((part, i) => (i % 2 === 1 ? '.+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${source}$`).test(identifier);
}
