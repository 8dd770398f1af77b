import * as pkijs from 'pkijs';
import type * as asn1js from 'asn1js';
import { fromTree, integerHex } from '../ocsp/asn1.js';
import { extensionOids, messageImprint, type MessageImprint } from './imprint.js';

export interface TspQueryInfo {
  kind: 'query';
  version: number;
  messageImprint: MessageImprint;
  /** The policy OID asked for. */
  policy?: string;
  /** Lower-case hex. */
  nonce?: string;
  /** Whether the TSA is asked to include its certificate. */
  certReq: boolean;
  extensions?: string[];
}

/** A TimeStampReq (RFC 3161 §2.4.1) from its parsed tree. */
export function decodeTspQuery(tree: asn1js.AsnType): TspQueryInfo {
  const query = fromTree((schema) => new pkijs.TimeStampReq({ schema }), tree, 'time-stamp query');
  const info: TspQueryInfo = { kind: 'query', version: query.version, messageImprint: messageImprint(query.messageImprint), certReq: query.certReq ?? false };
  if (query.reqPolicy !== undefined) info.policy = query.reqPolicy;
  if (query.nonce) info.nonce = integerHex(query.nonce);
  const extensions = extensionOids(query.extensions);
  if (extensions) info.extensions = extensions;
  return info;
}
