import { ProblemError } from '../../errors/index.js';
import { decodeInput, pemBlocks } from '../input.js';
import { MultipartBody } from '../routes/multipart-body.js';

const CERTIFICATE_LABELS = new Set(['CERTIFICATE', 'X509 CERTIFICATE', 'TRUSTED CERTIFICATE']);

/**
 * The certificates of a tc request, in the order given: a PEM bundle (several blocks; blocks that are
 * not certificates, such as a key, are skipped), or one certificate as base64 or DER.
 */
export function certificatesIn(input: string | Uint8Array): Uint8Array[] {
  const text = typeof input === 'string' ? input : Buffer.from(input).toString('latin1');
  if (text.includes('-----BEGIN')) {
    const certs = pemBlocks(text).filter((b) => CERTIFICATE_LABELS.has(b.label));
    if (certs.length === 0) throw new ProblemError('PKI-001', { detail: 'no CERTIFICATE block' });
    return certs.map((b) => b.der);
  }
  return [decodeInput(input).der];
}

/**
 * What POST /api/v1/rfc5280/tc may carry: JSON `{pem}`, a PEM bundle as text/plain (or
 * application/x-pem-file), DER or PEM bytes (application/pkix-cert, application/octet-stream), or
 * multipart/form-data with the field `x509` (Horizon's v1 Go client and MCP post that).
 */
export function tcBody(body: unknown): string | Uint8Array {
  if (body instanceof MultipartBody) return new Uint8Array(body.object(['x509']));
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body)) return new Uint8Array(body);
  if (body && typeof body === 'object') {
    const { pem, x509, certificate } = body as { pem?: unknown; x509?: unknown; certificate?: unknown };
    const value = pem ?? x509 ?? certificate;
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  throw new ProblemError('HTTP-003', { message: 'The body must be {"pem": "<PEM>"}, a PEM bundle, or a multipart x509 field' });
}
