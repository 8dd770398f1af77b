import type { CsrInfo } from '../csr/parse.js';
import { csrInfoSchema } from '../csr/schema.js';
import { unsupportedExtensions, unsupportedExtensionsSchema } from './x509.js';

/**
 * A decoded CSR as Horizon's clients read it (client-compat §7 `{dn, sans, dnElements, keyType, pem}`;
 * the MCP server's decode_csr adds unsupportedExtensions), with Certwright's key thumbprint, signature
 * check and attributes beside them.
 */
export type CsrView = CsrInfo & { unsupportedExtensions?: { oid: string; hex: string }[] };

export function csrView(info: CsrInfo): CsrView {
  const requested = info.attributes.extensionRequest;
  const unsupported = requested ? unsupportedExtensions(requested) : undefined;
  return unsupported ? { ...info, unsupportedExtensions: unsupported } : info;
}

export const csrViewSchema = {
  ...csrInfoSchema,
  properties: { ...csrInfoSchema.properties, unsupportedExtensions: unsupportedExtensionsSchema },
} as const;
