import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { InventoryContext } from '../../core/inventory/index.js';
import type { CertificateInput, CertificateObject } from '../../core/inventory/types.js';
import type { Kernel } from '../../core/kernel.js';
import { CertificateIssuer } from '../../core/pki/issue/issuer.js';
import type { NameAttribute } from '../../core/pki/issue/names.js';
import { selfSignedCertificate } from '../../core/pki/issue/self-signed.js';
import { toPem } from '../../core/pki/input.js';
import type { SubjectAlternateName } from '../../core/pki/x509/model.js';
import { ADMIN_HEADERS } from './kernel.js';

export const DAY = 86_400_000;

type KeyKind = 'ec' | 'rsa' | 'ed25519';
const keys = new Map<KeyKind, { privateKey: KeyObject; spki: Uint8Array }>();
function keyOf(kind: KeyKind): { privateKey: KeyObject; spki: Uint8Array } {
  let key = keys.get(kind);
  if (!key) {
    const pair =
      kind === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'prime256v1' }) : kind === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ed25519');
    key = { privateKey: pair.privateKey, spki: new Uint8Array(pair.publicKey.export({ type: 'spki', format: 'der' })) };
    keys.set(kind, key);
  }
  return key;
}

/** One certificate of a seeded inventory: how to build it (relative dates) and what to store with it. */
export interface SeedCertificate {
  name: string;
  subject: string | NameAttribute[];
  sans?: SubjectAlternateName[];
  /** Issuing CA, or `self` for a self-signed certificate (a CA when `ca` is true). */
  issuer: 'acme' | 'corp' | 'self';
  ca?: boolean;
  key: KeyKind;
  /** Days from now. */
  notBefore: number;
  notAfter: number;
  input?: Omit<CertificateInput, 'certificate'>;
}

/** Two issuing CAs (self-signed, P-256) the seeds are signed by. */
export function seedIssuers(): Record<'acme' | 'corp', CertificateIssuer> {
  const make = (subject: string): CertificateIssuer => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const der = selfSignedCertificate(privateKey, { subject, notBefore: Date.now() - 2000 * DAY, notAfter: Date.now() + 4000 * DAY });
    return new CertificateIssuer({ caCertificateDer: der, caKey: privateKey });
  };
  return { acme: make('CN=Acme Issuing CA,O=Acme'), corp: make('CN=Corp Root CA,O=Corp') };
}

/** Builds each seed's certificate (real signatures) and imports it through the repository. */
export async function seedInventory(kernel: Kernel, seeds: readonly SeedCertificate[], labels: readonly { name: string; regex?: string | null }[] = []): Promise<Map<string, CertificateObject>> {
  for (const label of labels) {
    const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificate/labels/', headers: ADMIN_HEADERS, payload: { name: label.name, regex: label.regex ?? null, displayName: [], description: [] } });
    if (res.statusCode !== 201) throw new Error(`label ${label.name}: ${res.statusCode} ${res.body}`);
  }
  const inventory = kernel.container.resolve<InventoryContext>('inventory');
  const issuers = seedIssuers();
  const now = Date.now();
  const out = new Map<string, CertificateObject>();
  for (const seed of seeds) {
    const key = keyOf(seed.key);
    const template = {
      subject: seed.subject,
      sans: seed.sans ?? [],
      notBefore: now + seed.notBefore * DAY,
      notAfter: now + seed.notAfter * DAY,
      basicConstraints: { ca: seed.ca ?? false },
    };
    const der = seed.issuer === 'self' ? selfSignedCertificate(key.privateKey, template) : issuers[seed.issuer].issueForKey(key.spki, template);
    out.set(seed.name, await inventory.repository.insert('default', { certificate: toPem(der), ...(seed.input ?? {}) }));
  }
  return out;
}
