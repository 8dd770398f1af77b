/**
 * Each profile's registration authority: an RSA-2048 certificate issued from the profile's CA through the
 * request workflow (so it is in the inventory, with its requester `<protocol>:ra`), its key sealed at rest under the
 * platform's master key. Clients encrypt their messages to it and verify our CertReps with it. Issued on first
 * use (the profile's validity) and again when less than a third of its lifetime is left; kept in memory per
 * node for a minute.
 */
import { createPrivateKey, webcrypto, X509Certificate, type KeyObject } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { EnrollmentFacade } from '../contracts/enrollment.js';
import type { PluginDatabase, SecretsFacade } from '../context.js';
import type { PkiToolkitFacade } from '../pki-toolkit.js';

const TENANT = 'default';
const CACHE_MS = 60_000;

export interface RegistrationAuthority {
  certificatePem: string;
  certificateDer: Uint8Array;
  privateKey: KeyObject;
  /** The profile's CA chain, issuing CA first (PEM). */
  chain: string[];
}

interface Row {
  certificate_pem: string;
  key_sealed: string;
  not_after: number | string;
  renew_after: number | string;
}

export class RaStore {
  private readonly cache = new Map<string, { at: number; ra: Promise<RegistrationAuthority> }>();

  constructor(
    private readonly deps: { protocol: string; table: string; db: PluginDatabase; enrollment: EnrollmentFacade; pki: PkiToolkitFacade; secrets: SecretsFacade; now: () => number },
  ) {}

  async get(profile: string): Promise<RegistrationAuthority> {
    const now = this.deps.now();
    const hit = this.cache.get(profile);
    if (hit && now - hit.at < CACHE_MS) return hit.ra;
    const ra = this.load(profile);
    this.cache.set(profile, { at: now, ra });
    ra.catch(() => this.cache.delete(profile));
    return ra;
  }

  private async load(profile: string): Promise<RegistrationAuthority> {
    const { db, secrets, enrollment, now } = this.deps;
    const row = (await db(this.deps.table).where({ tenant: TENANT, profile }).first()) as Row | undefined;
    const chain = await enrollment.caChain(profile, TENANT);
    if (row && Number(row.renew_after) > now()) return this.open(profile, row, chain);
    const fresh = await this.issue(profile);
    const x509 = new X509Certificate(fresh.certificatePem);
    const notBefore = Date.parse(x509.validFrom);
    const notAfter = Date.parse(x509.validTo);
    const record = {
      certificate_pem: fresh.certificatePem,
      key_sealed: secrets.seal(fresh.keyPem, `${this.deps.protocol}-ra:${profile}`),
      not_after: notAfter,
      renew_after: notAfter - Math.floor((notAfter - notBefore) / 3),
    };
    if (row) await db(this.deps.table).where({ tenant: TENANT, profile, certificate_pem: row.certificate_pem }).update(record);
    // Two nodes issuing at once: the first row written wins and both use it.
    else await db(this.deps.table).insert({ tenant: TENANT, profile, ...record, created_at: now() }).onConflict(['tenant', 'profile']).ignore();
    const stored = (await db(this.deps.table).where({ tenant: TENANT, profile }).first()) as Row;
    return this.open(profile, stored, chain);
  }

  private open(profile: string, row: Row, chain: string[]): RegistrationAuthority {
    const certificatePem = row.certificate_pem;
    return {
      certificatePem,
      certificateDer: new Uint8Array(new X509Certificate(certificatePem).raw),
      privateKey: createPrivateKey(this.deps.secrets.open(row.key_sealed, `${this.deps.protocol}-ra:${profile}`)),
      chain,
    };
  }

  private async issue(profile: string): Promise<{ certificatePem: string; keyPem: string }> {
    const { privateKeyPem, publicKeyPem } = this.deps.pki.generateKey('rsa-2048');
    const csrPem = await raCsr(privateKeyPem, publicKeyPem, `${this.deps.protocol.toUpperCase()} RA ${profile}`);
    const outcome = await this.deps.enrollment.enroll({ protocol: this.deps.protocol, profile, csrPem, requester: `${this.deps.protocol}:ra`, tenant: TENANT, service: true });
    if ('refused' in outcome) throw new Error(`the RA certificate of profile ${profile} was refused: ${outcome.code} ${outcome.message}`);
    if (!outcome.certificatePem) throw new Error(`the RA certificate of profile ${profile} is not issued yet (${outcome.status})`);
    return { certificatePem: outcome.certificatePem, keyPem: privateKeyPem };
  }
}

/** A PKCS#10 request for the RA key (RSA, SHA-256), subject CN=<cn>. */
async function raCsr(privateKeyPem: string, publicKeyPem: string, cn: string): Promise<string> {
  const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  const der = (pem: string) => Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  const csr = new pkijs.CertificationRequest();
  csr.subject.typesAndValues.push(new pkijs.AttributeTypeAndValue({ type: '2.5.4.3', value: new asn1js.Utf8String({ value: cn }) }));
  await csr.subjectPublicKeyInfo.importKey(await webcrypto.subtle.importKey('spki', der(publicKeyPem), algorithm, true, ['verify']));
  await csr.sign(await webcrypto.subtle.importKey('pkcs8', der(privateKeyPem), algorithm, false, ['sign']), 'SHA-256');
  const out = Buffer.from(csr.toSchema().toBER(false)).toString('base64');
  return `-----BEGIN CERTIFICATE REQUEST-----\n${out.replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE REQUEST-----\n`;
}
