import type { ConfigObject, ConfigObjectType } from '@certwright/sdk';
import { description, objectName } from './common.js';

/** Horizon's secret wrapper (SecretString): `{value}`. */
const secretString = {
  type: 'object',
  additionalProperties: false,
  properties: { value: { type: ['string', 'null'], minLength: 1, maxLength: 65536 } },
} as const;

/** Which top-level fields each kind of credential holds (Horizon: password, raw, x509; keypair is ours). */
const KINDS: Record<string, readonly string[]> = {
  password: ['login', 'password'],
  raw: ['secret'],
  x509: ['store'],
  keypair: ['store'],
};
const VALUE_FIELDS = ['login', 'password', 'secret', 'store'];
const PEM = /^-----BEGIN [A-Z0-9 ]+-----[\s\S]+-----END [A-Z0-9 ]+-----\s*$/;

/**
 * Credentials (/api/v1/security/credentials/), in Horizon's shape (horizon-go PasswordCredentials,
 * RawCredentials, CertificateCredentials): `password` (login + password), `raw` (a token or API key in
 * `secret`), `x509` (`store`: a certificate and its private key), and `keypair` (`store`: a private key,
 * optionally its public key). Secrets travel as `{value}` and are answered as `{value: "********"}`.
 * Connectors, triggers, provisioners, proxies and storages name a credential instead of holding a secret;
 * they resolve it when they use it, so a PUT (rotation) applies to every referrer at once. `targets` limits
 * which kinds of object may use it (lowercase: proxy, storage, thirdparty, dcv, pki, trigger…).
 */
export const credentialType: ConfigObjectType = {
  type: 'credential',
  title: 'Credentials',
  noun: 'credential',
  exportKey: 'credentials',
  description: 'Typed secrets (login and password, token, certificate and key, key pair) referenced by name; never answered in clear.',
  basePath: '/api/v1/security/credentials/',
  tag: 'security',
  section: 'credentials',
  errorFamily: 'CREDENTIALS',
  properties: {
    name: objectName,
    description: { anyOf: [description, { type: 'null' }] },
    type: { type: 'string', enum: Object.keys(KINDS) },
    expires: { type: ['integer', 'null'], minimum: 0, description: 'When these credentials expire (epoch ms)' },
    targets: { type: 'array', maxItems: 32, uniqueItems: true, items: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,31}$' }, description: 'Kinds of object allowed to use them (left out: any)' },
    triggers: {
      type: 'object',
      additionalProperties: false,
      properties: { onCredentialsExpiration: { type: 'array', maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 191 } } },
    },
    login: { type: 'string', minLength: 1, maxLength: 1024 },
    password: secretString,
    secret: secretString,
    store: {
      type: 'object',
      additionalProperties: false,
      properties: { certificate: { type: 'string', maxLength: 65536 }, publicKey: { type: 'string', maxLength: 65536 }, value: { type: ['string', 'null'], maxLength: 65536 } },
    },
  },
  required: ['name', 'type'],
  secrets: ['password.value', 'secret.value', 'store.value'],
  hooks: {
    validate(object: ConfigObject) {
      const type = object.type as string;
      const fields = KINDS[type]!;
      const stray = VALUE_FIELDS.find((f) => object[f] !== undefined && !fields.includes(f));
      if (stray) return `${stray}: is not a field of a ${type} credential (its fields: ${fields.join(', ')})`;
      const value = (field: string): unknown => (object[field] as { value?: unknown } | undefined)?.value;
      if (type === 'password') {
        if (typeof object.login !== 'string') return 'login: is required for a password credential';
        if (typeof value('password') !== 'string') return 'password.value: is required for a password credential';
      }
      if (type === 'raw' && typeof value('secret') !== 'string') return 'secret.value: is required for a raw credential';
      if (type === 'x509' || type === 'keypair') {
        const store = (object.store ?? {}) as { certificate?: string; publicKey?: string; value?: string };
        if (typeof store.value !== 'string' || !PEM.test(store.value.trim())) return 'store.value: the private key is required, as PEM';
        if (type === 'x509' && (typeof store.certificate !== 'string' || !PEM.test(store.certificate.trim()))) return 'store.certificate: the certificate is required, as PEM';
        if (type === 'x509' && store.publicKey !== undefined) return 'store.publicKey: is a field of keypair credentials';
        if (type === 'keypair' && store.certificate !== undefined) return 'store.certificate: is a field of x509 credentials';
        if (store.publicKey !== undefined && !PEM.test(store.publicKey.trim())) return 'store.publicKey: must be PEM';
      }
    },
  },
};

/**
 * A credential as a consumer reads it, or why it cannot use it: the kind it needs and its own target
 * (`proxy`, `storage`…) are checked here, once for every consumer.
 */
export function usableCredential(credential: ConfigObject | null, name: string, kind: string, target: string): { ok: true; credential: ConfigObject } | { ok: false; reason: string } {
  if (!credential) return { ok: false, reason: `no credential is named "${name}"` };
  if (credential.type !== kind) return { ok: false, reason: `"${name}" is a ${String(credential.type)} credential; a ${kind} credential is needed` };
  const targets = credential.targets as string[] | undefined;
  if (targets && targets.length > 0 && !targets.includes(target)) return { ok: false, reason: `"${name}" is not usable by a ${target} (its targets: ${targets.join(', ')})` };
  return { ok: true, credential };
}
