import { ProblemError } from '../errors/index.js';

/** How an object reached us: PEM text, bare base64, or raw DER bytes. */
export type InputEncoding = 'pem' | 'base64' | 'der';

export interface DecodedInput {
  der: Uint8Array;
  encoding: InputEncoding;
  /** The PEM label (`CERTIFICATE`, `X509 CRL`, …) when the input was PEM. */
  label?: string;
}

/** Largest object the decoders accept (a CRL of a big CA can weigh megabytes). */
export const MAX_OBJECT_BYTES = 16 * 1024 * 1024;

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 #]+)-----([\s\S]*?)-----END \1-----/g;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** Base64 (standard or URL alphabet, whitespace tolerated) to bytes; null when it is not base64. */
export function fromBase64(text: string): Uint8Array | null {
  const compact = text.replace(/\s+/g, '');
  if (compact.length === 0 || !BASE64.test(compact)) return null;
  const bytes = Buffer.from(compact.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length > 0 ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) : null;
}

/**
 * Every PEM block of a text, in order. Clients send PEM percent-encoded in paths, with `+` for spaces
 * from form encoding, with \r\n or literal "\n" escapes: all are undone here.
 */
export function pemBlocks(text: string): { label: string; der: Uint8Array }[] {
  const normalised = text.includes('-----') ? text.replace(/\\n/g, '\n') : text;
  const out: { label: string; der: Uint8Array }[] = [];
  for (const m of normalised.matchAll(PEM_BLOCK)) {
    // Headers such as Proc-Type (encrypted PEM keys) come before a blank line.
    const body = m[2]!.includes(':') ? m[2]!.split(/\r?\n\r?\n/).pop()! : m[2]!;
    const der = fromBase64(body.replace(/ /g, '+'));
    if (!der) throw new ProblemError('PKI-001', { detail: `the ${m[1]} block is not base64` });
    out.push({ label: m[1]!, der });
  }
  return out;
}

/** A path parameter may arrive percent-encoded once more than fastify decodes. */
export function decodeParam(raw: string): string {
  if (!/%[0-9A-Fa-f]{2}/.test(raw)) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * One object from text (PEM or base64) or bytes (DER, or PEM/base64 sent as a raw body). The first PEM
 * block is taken; callers that want chains use pemBlocks.
 */
export function decodeInput(input: string | Uint8Array): DecodedInput {
  if (input.length > MAX_OBJECT_BYTES * 2) throw new ProblemError('PKI-004', { detail: `more than ${MAX_OBJECT_BYTES} bytes` });
  if (typeof input !== 'string') {
    const first = input[0];
    // DER starts with a constructed SEQUENCE; anything printable is text in a raw body.
    if (first === 0x30) return checkSize({ der: input, encoding: 'der' });
    input = Buffer.from(input).toString('latin1');
  }
  const text = decodeParam(input.trim());
  if (text.includes('-----BEGIN')) {
    const [block] = pemBlocks(text);
    if (!block) throw new ProblemError('PKI-001', { detail: 'no complete PEM block' });
    return checkSize({ der: block.der, encoding: 'pem', label: block.label });
  }
  const der = fromBase64(text);
  if (!der) throw new ProblemError('PKI-001', { detail: 'neither PEM, base64 nor DER' });
  return checkSize({ der, encoding: 'base64' });
}

function checkSize(decoded: DecodedInput): DecodedInput {
  if (decoded.der.length > MAX_OBJECT_BYTES) throw new ProblemError('PKI-004', { detail: `more than ${MAX_OBJECT_BYTES} bytes` });
  return decoded;
}

/** PEM text of DER bytes under a label, 64 characters per line. */
export function toPem(der: Uint8Array, label = 'CERTIFICATE'): string {
  const b64 = Buffer.from(der.buffer, der.byteOffset, der.length).toString('base64');
  let body = '';
  for (let i = 0; i < b64.length; i += 64) body += `${b64.slice(i, i + 64)}\n`;
  return `-----BEGIN ${label}-----\n${body}-----END ${label}-----\n`;
}
