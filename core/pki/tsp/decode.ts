import * as asn1js from 'asn1js';
import { ProblemError } from '../../errors/index.js';
import * as pkijs from 'pkijs';
import { fromTree, parseAsn1 } from '../ocsp/asn1.js';
import { decodeTspQuery, type TspQueryInfo } from './query.js';
import { decodeTspReply, type TspReplyInfo } from './reply.js';
import { decodeTspToken, type TspTokenInfo } from './token.js';

export type { MessageImprint } from './imprint.js';
export type { TspQueryInfo } from './query.js';
export type { TspReplyInfo } from './reply.js';
export type { TspSigner, TspTokenInfo } from './token.js';

/** A bare token (openssl ts -reply -token_out), decoded as a reply would carry it. */
export interface TspBareTokenInfo {
  kind: 'token';
  token: TspTokenInfo;
}

export type TspInfo = TspQueryInfo | TspReplyInfo | TspBareTokenInfo;

/**
 * An RFC 3161 object, told apart by its first field: a query starts with its version INTEGER, a reply
 * with its PKIStatusInfo SEQUENCE, a bare token (ContentInfo) with its content type OID.
 */
export function decodeTsp(der: Uint8Array): TspInfo {
  const tree = parseAsn1(der, 'time-stamp object');
  const first = tree instanceof asn1js.Sequence ? tree.valueBlock.value[0] : undefined;
  const universal = first?.idBlock.tagClass === 1 ? first.idBlock.tagNumber : -1;
  if (universal === 2) return decodeTspQuery(tree);
  if (universal === 16 && first?.idBlock.isConstructed) return decodeTspReply(tree);
  if (universal === 6) return { kind: 'token', token: decodeTspToken(fromTree((schema) => new pkijs.ContentInfo({ schema }), tree, 'time-stamp token')) };
  throw new ProblemError('PKI-002', { detail: 'neither a time-stamp query, reply nor token' });
}
