import type { ConfigObject, ConfigObjectType } from '@certwright/sdk';
import { importJWK, type JWK } from 'jose';
import { NAME, permissionsInput, permissionsOf } from '../groups/input.js';

/** Asymmetric JWS algorithms only: a service account's JWKS is public, so HS* could be forged by anyone reading it. */
export const SERVICE_ACCOUNT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

const oneOrMany = { anyOf: [{ type: 'string', minLength: 1, maxLength: 1024 }, { type: 'array', minItems: 1, maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 1024 } }] } as const;

/** A JWK field that holds private material: a public JWKS never carries one. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

/** The service account as stored and read (what the verifier uses). */
export interface ServiceAccount {
  name: string;
  description?: string;
  enabled: boolean;
  jwks: { url?: string; keys?: JWK[] }[];
  issuer: string | string[];
  audience: string | string[];
  subjects?: string[];
  requiredClaims?: Record<string, string | number | boolean | (string | number | boolean)[]>;
  maxTokenAgeSeconds?: number;
  algorithms?: string[];
  roles?: string[];
  permissions?: { value: string; filter?: string }[];
}

async function jwksProblem(jwks: ServiceAccount['jwks']): Promise<string | void> {
  for (const [i, source] of jwks.entries()) {
    const given = (source.url ? 1 : 0) + (source.keys ? 1 : 0);
    if (given !== 1) return `jwks[${i}]: give either url or keys`;
    for (const [k, key] of (source.keys ?? []).entries()) {
      if (PRIVATE_MEMBERS.some((m) => m in key)) return `jwks[${i}].keys[${k}]: a private or symmetric key; publish the public key only`;
      try {
        await importJWK(key, key.alg ?? (key.kty === 'OKP' ? 'EdDSA' : key.kty === 'EC' ? { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }[String(key.crv)] : 'RS256'));
      } catch (err) {
        return `jwks[${i}].keys[${k}]: not a usable public key (${(err as Error).message})`;
      }
    }
  }
}

/**
 * JWKS service accounts (/api/v1/security/service-accounts/: GET, POST, PUT, GET :name, DELETE :name — the
 * registry's standard set). A workload (a CI job, a Kubernetes pod) presents a JWT its own issuer signed; the
 * account says which keys may have signed it, which claims it must carry, and what it may do. The issuer and
 * the audience are required: without them any token of a shared issuer (every GitHub repository's) would do.
 */
export function serviceAccountType(): ConfigObjectType {
  return {
    type: 'service-account',
    title: 'Service accounts',
    noun: 'service account',
    exportKey: 'serviceAccounts',
    description:
      'Workload identities: a JWT (header X-API-SVA with the account name, the token in X-API-TOKEN or Authorization: Bearer) signed by one of the JWKS and passing the claim rules grants the roles and permissions. No session is opened.',
    basePath: '/api/v1/security/service-accounts/',
    tag: 'security',
    section: 'service-accounts',
    errorFamily: 'SEC-SVA',
    update: 'replace',
    serverOwned: ['createdAt', 'updatedAt'],
    properties: {
      name: NAME,
      description: { type: ['string', 'null'], maxLength: 1024 },
      enabled: { type: 'boolean', default: true },
      jwks: {
        type: 'array',
        minItems: 1,
        maxItems: 8,
        description: 'Where the signing keys are: a JWKS URL (cached, fetched again on an unknown kid at most every 30 s) or static public keys',
        items: {
          type: 'object',
          additionalProperties: false,
          properties: {
            url: { type: 'string', maxLength: 2048, pattern: '^https?://' },
            keys: { type: 'array', minItems: 1, maxItems: 32, items: { type: 'object', required: ['kty'], additionalProperties: true, properties: { kty: { type: 'string' } } } },
          },
        },
      },
      issuer: { ...oneOrMany, description: 'Accepted `iss` values (exact)' },
      audience: { ...oneOrMany, description: 'Accepted `aud` values: the token must name one' },
      subjects: {
        type: 'array',
        maxItems: 64,
        items: { type: 'string', minLength: 1, maxLength: 1024 },
        description: '`sub` patterns (`*` matches any run of characters), e.g. `system:serviceaccount:ci:*` or `repo:acme/app:ref:refs/heads/*`; empty: any subject',
      },
      requiredClaims: {
        type: 'object',
        maxProperties: 32,
        description: 'Top-level claims the token must carry: claim name → accepted value or values (strings may use `*`)',
        additionalProperties: {
          anyOf: [
            { type: ['string', 'number', 'boolean'] },
            { type: 'array', minItems: 1, maxItems: 64, items: { type: ['string', 'number', 'boolean'] } },
          ],
        },
      },
      maxTokenAgeSeconds: { type: 'integer', minimum: 1, maximum: 86400, description: 'Refuse tokens issued (`iat`) longer ago than this' },
      algorithms: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...SERVICE_ACCOUNT_ALGORITHMS] }, description: 'Accepted JWS algorithms (default: all asymmetric ones)' },
      roles: { type: 'array', maxItems: 256, uniqueItems: true, items: NAME },
      permissions: permissionsInput,
    },
    required: ['name', 'jwks', 'issuer', 'audience'],
    references: [{ field: 'roles', type: 'role', many: true }],
    hooks: {
      normalize(object): ConfigObject {
        return {
          ...object,
          enabled: object.enabled !== false,
          permissions: permissionsOf(object.permissions as Parameters<typeof permissionsOf>[0], 'SEC-SVA-002'),
        };
      },
      validate(object) {
        return jwksProblem((object as unknown as ServiceAccount).jwks);
      },
    },
  };
}
