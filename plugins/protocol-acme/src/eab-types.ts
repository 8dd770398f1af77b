/**
 * External account binding (RFC 8555 §7.3.4) as two configuration types the kernel serves the standard set
 * of: EAB policies (which profiles, identifiers and validation methods a key allows) and EAB keys (the kid
 * and its HMAC key, sealed at rest and never answered, bound to a policy).
 */
import type { ConfigObjectType } from '@certwright/sdk';
import { CHALLENGE_TYPES } from './constants.js';

export const EAB_KEY = 'acme-eab-key';
export const EAB_POLICY = 'acme-eab-policy';

const names = { type: 'array', maxItems: 100, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 191 } };

export const eabPolicyType: ConfigObjectType = {
  type: EAB_POLICY,
  title: 'ACME EAB policies',
  description: 'What the ACME accounts bound with an EAB key of this policy may do.',
  basePath: '/api/v1/acme/eab/policies/',
  tag: 'ACME',
  section: 'acme',
  errorFamily: 'EABPOLICY',
  noun: 'EAB policy',
  exportKey: 'acmeEabPolicies',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 191, pattern: '^[A-Za-z0-9._@-]+$' },
    description: { type: 'string', maxLength: 1000 },
    profiles: { ...names, description: 'Profiles the accounts may use; empty: every profile with ACME' },
    identifiers: {
      type: 'array',
      maxItems: 100,
      items: { type: 'string', minLength: 1, maxLength: 255, pattern: '^(\\*\\.)?[A-Za-z0-9.-]+$|^[0-9a-fA-F:.]+$' },
      description: 'Names the accounts may order: `example.com` (that name), `*.example.com` (names below it); empty: any',
    },
    challengeTypes: { type: 'array', uniqueItems: true, items: { type: 'string', enum: [...CHALLENGE_TYPES] }, description: 'Validation methods offered; empty: the profile\'s' },
  },
  required: ['name'],
  serverOwned: ['createdAt', 'updatedAt'],
};

export const eabKeyType: ConfigObjectType = {
  type: EAB_KEY,
  title: 'ACME EAB keys',
  description: 'A key identifier (the EAB kid) and its HMAC key, given to an ACME client to bind its account.',
  basePath: '/api/v1/acme/eab/keys/',
  tag: 'ACME',
  section: 'acme',
  errorFamily: 'EABKEY',
  noun: 'EAB key',
  exportKey: 'acmeEabKeys',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description: 'The key identifier (kid) the client sends' },
    description: { type: 'string', maxLength: 1000 },
    hmacKey: { type: 'string', minLength: 43, maxLength: 172, pattern: '^[A-Za-z0-9_-]+={0,2}$', description: 'The HMAC key, base64url (32 bytes at least); sealed at rest, never answered' },
    policy: { type: 'string', minLength: 1, maxLength: 191, description: 'The EAB policy (/api/v1/acme/eab/policies/) of the accounts it binds' },
    enabled: { type: 'boolean', default: true },
    expiresAt: { type: 'integer', minimum: 0, description: 'Epoch ms after which it binds no new account' },
  },
  required: ['name', 'hmacKey', 'policy'],
  serverOwned: ['createdAt', 'updatedAt'],
  secrets: ['hmacKey'],
  references: [{ field: 'policy', type: EAB_POLICY }],
};

export interface EabPolicy {
  name: string;
  profiles?: string[];
  identifiers?: string[];
  challengeTypes?: string[];
}

export interface EabKey {
  name: string;
  hmacKey: string;
  policy: string;
  enabled?: boolean;
  expiresAt?: number;
}

/** Whether a policy's identifier patterns allow a name (`example.com` exactly, `*.example.com` below it). */
export function identifierAllowed(policy: EabPolicy, value: string): boolean {
  const patterns = policy.identifiers ?? [];
  if (patterns.length === 0) return true;
  const v = value.toLowerCase().replace(/^\*\./, '');
  return patterns.some((p) => {
    const pattern = p.toLowerCase();
    return pattern.startsWith('*.') ? v.endsWith(pattern.slice(1)) : v === pattern;
  });
}
