import { X509Certificate } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { ProblemError } from '../../errors/index.js';
import { readCertificate } from '../cas/ca-certificate.js';
import type { CaRecord } from '../cas/store.js';
import { decodeInput } from '../input.js';
import type { CertificateInfo } from '../x509/model.js';

/** A certificate in a path: its decoded fields, node's X509Certificate (for signatures) and, when imported, its CA. */
export interface ChainNode {
  info: CertificateInfo;
  x509: X509Certificate;
  ca: CaRecord | null;
}

/**
 * Decoded certificates and signature results, keyed by content (sha256 of the DER), so an entry can never be
 * stale: a CA whose certificate changes simply has another key. Chain building is not the ingest hot path,
 * but the tc decoder runs after every enrollment, and re-parsing the same CAs each time would dominate it.
 */
export class NodeCache {
  private readonly certs = new LRUCache<string, { info: CertificateInfo; x509: X509Certificate }>({ max: 2000 });
  private readonly signatures = new LRUCache<string, boolean>({ max: 20_000 });

  /** The node of an imported CA (its row's sha256 finds the cached parse without reading the PEM). */
  ofCa(ca: CaRecord): ChainNode {
    let entry = this.certs.get(ca.thumbprintSha256);
    if (!entry) {
      entry = this.parse(decodeInput(ca.certificate).der);
      this.certs.set(ca.thumbprintSha256, entry);
    }
    return { ...entry, ca };
  }

  /** The node of a certificate given by a client (not imported, or not known to be). */
  ofDer(der: Uint8Array): ChainNode {
    const entry = this.parse(der);
    const cached = this.certs.get(entry.info.thumbprints.sha256);
    if (!cached) this.certs.set(entry.info.thumbprints.sha256, entry);
    return { ...(cached ?? entry), ca: null };
  }

  /** Whether `issuer`'s key verifies `subject`'s signature. */
  signedBy(subject: ChainNode, issuer: ChainNode): boolean {
    const key = `${subject.info.thumbprints.sha256}:${issuer.info.thumbprints.sha256}`;
    let ok = this.signatures.get(key);
    if (ok === undefined) {
      try {
        ok = subject.x509.verify(issuer.x509.publicKey);
      } catch {
        // A key type node cannot use for this signature algorithm: it does not verify.
        ok = false;
      }
      this.signatures.set(key, ok);
    }
    return ok;
  }

  private parse(der: Uint8Array): { info: CertificateInfo; x509: X509Certificate } {
    const info = readCertificate(der);
    try {
      return { info, x509: new X509Certificate(der) };
    } catch (err) {
      throw new ProblemError('PKI-001', { detail: (err as Error).message });
    }
  }
}
