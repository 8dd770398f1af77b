/** One part of a multipart/form-data body. */
export interface FormPart {
  name: string | null;
  filename: string | null;
  contentType: string | null;
  data: Buffer;
}

/** The boundary of a multipart content type, or null. */
export function boundaryOf(contentType: string | undefined): string | null {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  return m ? (m[1] ?? m[2]!) : null;
}

/**
 * Splits a buffered multipart/form-data body (RFC 7578) into its parts. Small uploads only (one
 * certificate or bundle; fastify's bodyLimit bounds the buffer), so no streaming parser is needed.
 */
export function parseMultipart(body: Buffer, boundary: string): FormPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: FormPart[] = [];
  let pos = body.indexOf(delimiter);
  while (pos !== -1) {
    let start = pos + delimiter.length;
    // "--" after a delimiter closes the body.
    if (body[start] === 0x2d && body[start + 1] === 0x2d) break;
    if (body[start] === 0x0d) start += 2;
    else if (body[start] === 0x0a) start += 1;
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    // The CRLF before the next delimiter belongs to the delimiter.
    let end = next;
    if (body[end - 1] === 0x0a) end -= body[end - 2] === 0x0d ? 2 : 1;
    const part = body.subarray(start, end);
    let headerEnd = part.indexOf('\r\n\r\n');
    let skip = 4;
    if (headerEnd === -1) {
      headerEnd = part.indexOf('\n\n');
      skip = 2;
    }
    if (headerEnd !== -1) {
      const headers = part.subarray(0, headerEnd).toString('latin1');
      const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1] ?? '';
      parts.push({
        name: /\bname="([^"]*)"/i.exec(disposition)?.[1] ?? null,
        filename: /\bfilename="([^"]*)"/i.exec(disposition)?.[1] ?? null,
        contentType: /content-type:\s*([^\r\n;]+)/i.exec(headers)?.[1]?.trim() ?? null,
        data: part.subarray(headerEnd + skip),
      });
    }
    pos = next;
  }
  return parts;
}
