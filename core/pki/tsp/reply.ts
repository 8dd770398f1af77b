import * as pkijs from 'pkijs';
import type * as asn1js from 'asn1js';
import { ProblemError } from '../../errors/index.js';
import { fromTree } from '../ocsp/asn1.js';
import { decodeTspToken, type TspTokenInfo } from './token.js';

/** PKIStatus (RFC 3161 §2.4.2). */
const STATUSES = ['granted', 'grantedWithMods', 'rejection', 'waiting', 'revocationWarning', 'revocationNotification'] as const;
/** PKIFailureInfo bits (RFC 3161 §2.4.2). */
const FAILURES: Record<number, string> = {
  0: 'badAlg',
  2: 'badRequest',
  5: 'badDataFormat',
  14: 'timeNotAvailable',
  15: 'unacceptedPolicy',
  16: 'unacceptedExtension',
  17: 'addInfoNotAvailable',
  25: 'systemFailure',
};

export interface TspReplyInfo {
  kind: 'reply';
  status: (typeof STATUSES)[number];
  /** The TSA's free-text explanations. */
  statusText?: string[];
  /** Names of the failure bits set (unknown bits as `bit<n>`). */
  failInfo?: string[];
  token?: TspTokenInfo;
}

/** The bits set in a named BIT STRING, first bit = 0 (the most significant bit of the first byte). */
function failureNames(bits: asn1js.BitString): string[] {
  const bytes = bits.valueBlock.valueHexView;
  const out: string[] = [];
  for (let n = 0; n < bytes.length * 8; n++) if (bytes[n >> 3]! & (0x80 >> (n & 7))) out.push(FAILURES[n] ?? `bit${n}`);
  return out;
}

/** A TimeStampResp (RFC 3161 §2.4.2) from its parsed tree; the token when there is one. */
export function decodeTspReply(tree: asn1js.AsnType): TspReplyInfo {
  const reply = fromTree((schema) => new pkijs.TimeStampResp({ schema }), tree, 'time-stamp reply');
  const status = STATUSES[reply.status.status];
  if (status === undefined) throw new ProblemError('PKI-001', { detail: `unknown time-stamp status ${reply.status.status}` });
  const info: TspReplyInfo = { kind: 'reply', status };
  if (reply.status.statusStrings) info.statusText = reply.status.statusStrings.map((s) => s.valueBlock.value);
  if (reply.status.failInfo) info.failInfo = failureNames(reply.status.failInfo);
  if (reply.timeStampToken) info.token = decodeTspToken(reply.timeStampToken);
  return info;
}
