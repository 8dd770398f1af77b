import type * as pkijs from 'pkijs';
import { hex } from '../der/reader.js';
import { hashName } from '../ocsp/asn1.js';

/** The hash of the time-stamped data (RFC 3161 §2.4.1). */
export interface MessageImprint {
  /** sha256, … as openssl ts prints it. */
  hashAlgorithm: string;
  /** Lower-case hex. */
  hash: string;
}

export const messageImprint = (imprint: pkijs.MessageImprint): MessageImprint => ({
  hashAlgorithm: hashName(imprint.hashAlgorithm.algorithmId),
  hash: hex(imprint.hashedMessage.valueBlock.valueHexView),
});

/** The OIDs of the extensions present, in order (none is decoded: RFC 3161 defines none). */
export const extensionOids = (extensions: pkijs.Extension[] | undefined): string[] | undefined => extensions?.map((e) => e.extnID);
