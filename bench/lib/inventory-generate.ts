// The synthetic certificate inventory of bench/inventory: real, signed DER certificates whose names, dates and
// inventory attributes (profile, team, owner, labels, metadata, revocation…) follow a fixed distribution.
//
// Everything about certificate i is a pure function of (i, now) — `specOf` — so worker threads can sign the DER
// while the main thread rebuilds the same CertificateInput without shipping it across. Keys (CA and leaf) are made
// once by the main thread and handed to the workers as PKCS#8 / SPKI DER.
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { CertificateInput, KeyValue } from '../../core/inventory/types.js';
import { CertificateIssuer } from '../../core/pki/issue/issuer.js';
import { selfSignedCertificate } from '../../core/pki/issue/self-signed.js';
import type { CertificateTemplate } from '../../core/pki/issue/template.js';
import type { CertificateInfo, SubjectAlternateName } from '../../core/pki/x509/model.js';

export const DAY = 86_400_000;

/** ~20 profiles, the first ones far more common (weights 1/(k+1)). */
export const PROFILES = [
  'webserver',
  'webserver-internal',
  'client-auth',
  'smime',
  'vpn',
  'device',
  'api-gateway',
  'loadbalancer',
  'kubernetes-ingress',
  'mail-server',
  'code-signing',
  'wifi-radius',
  'iot-sensor',
  'printer',
  'database',
  'ldaps',
  'sso-idp',
  'payment',
  'partner-mtls',
  'legacy-iis',
] as const;
export const TEAM_COUNT = 50;
/** Owners belong to a team: 10 per team, 500 in all. */
export const OWNERS_PER_TEAM = 10;
export const DOMAIN_COUNT = 20;
const DEPARTMENTS = ['eng', 'ops', 'sales', 'hr', 'finance', 'it', 'lab', 'retail', 'legal', 'support', 'rnd', 'mkt'] as const;
const ENVS: readonly [string, number][] = [
  ['prod', 0.5],
  ['staging', 0.2],
  ['dev', 0.2],
  ['test', 0.1],
];
const APP_COUNT = 100;
const REASONS = ['keycompromise', 'superseded', 'cessationofoperation', 'affiliationchanged', 'unspecified'] as const;
const LIFETIMES_DAYS = [90, 365, 397, 730] as const;
const MODULES: readonly [string, number][] = [
  ['webra', 0.7],
  ['acme', 0.1],
  ['est', 0.08],
  ['scep', 0.05],
  ['discovery', 0.07],
];

export const teamName = (k: number): string => `team-${String(k).padStart(2, '0')}`;
export const ownerName = (k: number): string => `user-${String(k).padStart(3, '0')}`;
export const hostOf = (i: number): { host: string; dept: string; domain: number } => {
  const r = rng(i, 1);
  const dept = DEPARTMENTS[Math.floor(r() * DEPARTMENTS.length)]!;
  const domain = Math.floor(r() * DOMAIN_COUNT);
  return { host: `host${i}.${dept}.example${domain}.com`, dept, domain };
};

/** mulberry32 seeded by (i, stream): the same draws for certificate i in every thread and every run. */
function rng(i: number, stream: number): () => number {
  let a = (Math.imul(i ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(stream + 1, 0xc2b2ae35)) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Index drawn with weights 1/(k+1)^s over n items (a Zipf-like skew). */
function zipf(n: number, s: number): (u: number) => number {
  const cdf: number[] = [];
  let total = 0;
  for (let k = 0; k < n; k++) cdf.push((total += 1 / Math.pow(k + 1, s)));
  return (u) => {
    const x = u * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}
const pickProfile = zipf(PROFILES.length, 1);
const pickTeam = zipf(TEAM_COUNT, 0.5);
const pickApp = zipf(APP_COUNT, 1);
const weighted = (table: readonly [string, number][], u: number): string => {
  let acc = 0;
  for (const [v, w] of table) if (u < (acc += w)) return v;
  return table[table.length - 1]![0];
};

/** Leaf key kinds and their shares; a few keys of each are made once and reused. */
export const LEAF_KEYS: readonly { kind: string; share: number; make: () => { privateKey: KeyObject; publicKey: KeyObject } }[] = [
  { kind: 'ec-p256', share: 0.45, make: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }) },
  { kind: 'rsa-2048', share: 0.35, make: () => generateKeyPairSync('rsa', { modulusLength: 2048 }) },
  { kind: 'ec-p384', share: 0.1, make: () => generateKeyPairSync('ec', { namedCurve: 'P-384' }) },
  { kind: 'ed25519', share: 0.05, make: () => generateKeyPairSync('ed25519') },
  { kind: 'rsa-3072', share: 0.05, make: () => generateKeyPairSync('rsa', { modulusLength: 3072 }) },
];
const KEYS_PER_KIND = 2;

/** What certificate i is: how to sign it (CA, leaf key, template) and what the inventory is told about it. */
export interface CertificateSpec {
  ca: number;
  /** Index into the flat list of leaf SPKIs. */
  key: number;
  template: CertificateTemplate;
  input: Omit<CertificateInput, 'certificate'>;
}

export function specOf(i: number, now: number): CertificateSpec {
  const r = rng(i, 2);
  const { host, domain } = hostOf(i);
  const profile = PROFILES[pickProfile(r())]!;
  const teamIndex = pickTeam(r());
  const team = teamName(teamIndex);
  const owner = ownerName(teamIndex * OWNERS_PER_TEAM + Math.floor(r() * OWNERS_PER_TEAM));

  // Names: people certificates carry an email, the others a host name and a few SANs.
  let subject: string;
  const sans: SubjectAlternateName[] = [];
  if (profile === 'smime') {
    subject = `CN=User ${i},OU=${team},O=Example ${domain} Corp,C=FR`;
    sans.push({ sanType: 'RFC822NAME', value: `user${i}@example${domain}.com` });
  } else {
    subject = `CN=${host},OU=${team},O=Example ${domain} Corp,L=Paris,C=FR`;
    sans.push({ sanType: 'DNSNAME', value: host });
    if (r() < 0.6) sans.push({ sanType: 'DNSNAME', value: `www.${host}` });
    if (r() < 0.2) sans.push({ sanType: 'DNSNAME', value: `api${i % 997}.svc.example${(domain + 1) % DOMAIN_COUNT}.net` });
    if (r() < 0.25) sans.push({ sanType: 'IPADDRESS', value: `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}` });
    if (r() < 0.1) sans.push({ sanType: 'RFC822NAME', value: `ops-${team}@example${domain}.com` });
  }

  // Dates: notAfter uniform over now −2 years … now +2 years; notBefore one lifetime earlier, but (for 99%)
  // not in the future: a certificate is issued before it is used.
  const lifetime = LIFETIMES_DAYS[Math.floor(r() * LIFETIMES_DAYS.length)]! * DAY;
  const notAfter = Math.floor(now + (r() * 4 - 2) * 365 * DAY);
  let notBefore = notAfter - lifetime;
  if (notBefore > now && r() >= 0.01) notBefore = Math.floor(now - r() * 30 * DAY);

  const labels: KeyValue[] = [];
  if (r() < 0.85) labels.push({ key: 'env', value: weighted(ENVS, r()) });
  if (r() < 0.7) labels.push({ key: 'app', value: `app-${pickApp(r())}` });
  const metadata: KeyValue[] = r() < 0.2 ? [{ key: 'ticket', value: `T-${i}` }, { key: 'costcenter', value: `CC-${i % 40}` }] : [];
  const revoked = r() < 0.05;
  const input: Omit<CertificateInput, 'certificate'> = {
    module: weighted(MODULES, r()),
    profile,
    owner,
    team,
    labels,
    metadata,
    ...(r() < 0.4 ? { contactEmail: `ops-${team}@example${domain}.com` } : {}),
    ...(r() < 0.3 ? { autoRenew: true } : {}),
    ...(revoked
      ? { revoked: true, revocationDate: Math.floor(notBefore + r() * (Math.min(now, notAfter) - notBefore)), revocationReason: REASONS[Math.floor(r() * REASONS.length)]! }
      : {}),
  };

  const u = r();
  let acc = 0;
  let kind = LEAF_KEYS.findIndex((k) => u < (acc += k.share));
  if (kind < 0) kind = 0;
  const template: CertificateTemplate = {
    subject,
    sans,
    notBefore,
    notAfter,
    extendedKeyUsage: profile === 'smime' ? ['emailProtection'] : profile === 'client-auth' ? ['clientAuth'] : ['serverAuth', 'clientAuth'],
    crlDistributionPoints: ['http://crl.example.com/bench-issuing-ca.crl'],
    ocsp: ['http://ocsp.example.com/'],
  };
  return { ca: r() < 0.85 ? 0 : 1, key: kind * KEYS_PER_KIND + Math.floor(r() * KEYS_PER_KIND), template, input };
}

/** The keys every worker needs, as DER (KeyObjects do not cross threads as such). */
export interface KeyMaterial {
  cas: { certificateDer: Uint8Array; pkcs8: Uint8Array }[];
  leafSpkis: Uint8Array[];
}

/** Two issuing CAs (P-256 for 85% of the certificates, Ed25519 for the rest) and the leaf keys. */
export function makeKeyMaterial(now: number): KeyMaterial {
  const cas = [
    { subject: 'CN=Bench Issuing CA G1,O=Certwright Bench,C=FR', pair: generateKeyPairSync('ec', { namedCurve: 'P-256' }) },
    { subject: 'CN=Bench Issuing CA G2 (Ed25519),O=Certwright Bench,C=FR', pair: generateKeyPairSync('ed25519') },
  ].map(({ subject, pair }) => ({
    certificateDer: selfSignedCertificate(pair.privateKey, { subject, notBefore: now - 3000 * DAY, notAfter: now + 4000 * DAY }),
    pkcs8: new Uint8Array(pair.privateKey.export({ type: 'pkcs8', format: 'der' })),
  }));
  const leafSpkis: Uint8Array[] = [];
  for (const k of LEAF_KEYS) for (let n = 0; n < KEYS_PER_KIND; n++) leafSpkis.push(new Uint8Array(k.make().publicKey.export({ type: 'spki', format: 'der' })));
  return { cas, leafSpkis };
}

export function issuersOf(keys: KeyMaterial): CertificateIssuer[] {
  return keys.cas.map((c) => new CertificateIssuer({ caCertificateDer: c.certificateDer, caKey: createPrivateKey({ key: Buffer.from(c.pkcs8), format: 'der', type: 'pkcs8' }) }));
}

/** Signs certificates from..to-1 (the worker's job, and the fallback in this thread). */
export function issueRange(issuers: CertificateIssuer[], keys: KeyMaterial, from: number, to: number, now: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = from; i < to; i++) {
    const spec = specOf(i, now);
    out.push(issuers[spec.ca]!.issueForKey(keys.leafSpkis[spec.key]!, spec.template));
  }
  return out;
}

export interface WorkerRequest {
  id: number;
  from: number;
  to: number;
}
export interface WorkerAnswer {
  id: number;
  /** parseCertificate of each signed DER, in order (structured-cloned to the main thread). */
  infos: CertificateInfo[];
  error?: string;
}

/**
 * Worker threads that sign and decode certificate ranges. `chunk(from, to)` splits the range over the workers and
 * resolves with the decoded certificates in order. The workers run only while a chunk is asked for: nothing signs
 * while inserts are timed.
 */
export class CertificateFactory {
  private readonly workers: Worker[];
  private next = 0;
  private readonly pending = new Map<number, { resolve: (infos: CertificateInfo[]) => void; reject: (err: Error) => void }>();

  constructor(
    readonly keys: KeyMaterial,
    readonly now: number,
    threads = Math.max(1, availableParallelism()),
  ) {
    const url = new URL('./inventory-worker.ts', import.meta.url).href;
    // tsx's loader hooks are per thread (and Node 20 does not apply `--import tsx` to a worker's entry point):
    // the worker registers them, then imports the TypeScript module.
    const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url)}); })`;
    this.workers = Array.from({ length: threads }, () => {
      const w = new Worker(boot, { eval: true, workerData: { keys, now } });
      w.on('message', (a: WorkerAnswer) => {
        const p = this.pending.get(a.id);
        this.pending.delete(a.id);
        if (a.error) p?.reject(new Error(a.error));
        else p?.resolve(a.infos);
      });
      w.on('error', (err) => {
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
      });
      return w;
    });
  }

  get threads(): number {
    return this.workers.length;
  }

  async chunk(from: number, to: number): Promise<CertificateInfo[]> {
    const per = Math.ceil((to - from) / this.workers.length);
    const parts = await Promise.all(
      this.workers.map((w, k) => {
        const a = from + k * per;
        const b = Math.min(to, a + per);
        if (a >= b) return Promise.resolve<CertificateInfo[]>([]);
        const id = this.next++;
        return new Promise<CertificateInfo[]>((resolve, reject) => {
          this.pending.set(id, { resolve, reject });
          w.postMessage({ id, from: a, to: b } satisfies WorkerRequest);
        });
      }),
    );
    return parts.flat();
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
