import { Busboy } from '@fastify/busboy';
import type { FastifyInstance } from 'fastify';
import { ProblemError } from '../../errors/index.js';

/** One part of a multipart/form-data body: a file part or a plain field, with its bytes. */
export interface FormPart {
  name: string;
  filename: string | null;
  contentType: string | null;
  data: Buffer;
}

/** What a decoder route's body is after the multipart parser: the parts, in order. */
export class MultipartBody {
  constructor(readonly parts: FormPart[]) {}

  /**
   * The object a client uploaded: the first part named one of `names` (Horizon's clients name theirs
   * x509, pkcs10, crl, ocsp-response, timestamping-response, file), else the only file part.
   */
  object(names: readonly string[]): Buffer {
    const named = this.parts.find((p) => names.includes(p.name));
    const files = this.parts.filter((p) => p.filename !== null);
    const part = named ?? (files.length === 1 ? files[0] : undefined);
    if (!part) throw new ProblemError('HTTP-003', { message: `The multipart body has no ${names[0]} part`, detail: `expected a part named ${names.join(' or ')}` });
    if (part.data.length === 0) throw new ProblemError('PKI-001', { detail: `the ${part.name} part is empty` });
    return part.data;
  }
}

const MAX_PARTS = 8;

/** Splits a buffered multipart/form-data body (RFC 7578) with busboy; a malformed body is a 400 problem. */
export function parseMultipart(body: Buffer, contentType: string): Promise<MultipartBody> {
  return new Promise((resolve, reject) => {
    const parts: FormPart[] = [];
    let parser: ReturnType<typeof Busboy>;
    try {
      parser = Busboy({ headers: { 'content-type': contentType }, limits: { parts: MAX_PARTS, files: MAX_PARTS, fileSize: body.length } });
    } catch (err) {
      // busboy throws at once on a content type without a boundary.
      reject(new ProblemError('HTTP-002', { detail: `multipart body: ${(err as Error).message}` }));
      return;
    }
    parser.on('file', (name, stream, filename, _encoding, mimeType) => {
      const chunks: Buffer[] = [];
      // A body cut off inside a part errors on the part's stream too: unheard, that error would end the process.
      stream.on('error', (err: Error) => reject(new ProblemError('HTTP-002', { detail: `multipart body: ${err.message}` })));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => parts.push({ name, filename: filename ?? null, contentType: mimeType || null, data: Buffer.concat(chunks) }));
    });
    parser.on('field', (name, value) => parts.push({ name, filename: null, contentType: null, data: Buffer.from(value, 'utf8') }));
    parser.on('partsLimit', () => reject(new ProblemError('HTTP-003', { message: `A multipart body may carry at most ${MAX_PARTS} parts` })));
    parser.on('error', (err) => reject(new ProblemError('HTTP-002', { detail: `multipart body: ${(err as Error).message}` })));
    parser.on('finish', () => resolve(new MultipartBody(parts)));
    parser.end(body);
  });
}

/**
 * Takes multipart/form-data in a decoder scope (the upload of Horizon's MCP server and v1 Go client):
 * buffered like any body (the route's bodyLimit applies), then split into parts.
 */
export function acceptMultipart(app: FastifyInstance, bodyLimit?: number): void {
  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', ...(bodyLimit ? { bodyLimit } : {}) }, (request, body, done) => {
    parseMultipart(body as Buffer, request.headers['content-type'] ?? '').then(
      (parsed) => done(null, parsed),
      (err: Error) => done(err, undefined),
    );
  });
}
