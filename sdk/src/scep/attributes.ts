/**
 * SCEP transaction attributes (RFC 8894 §3.2.1): message types, pkiStatus and failInfo codes, and typed
 * readers over a SignerInfo's signed attributes. Every SCEP attribute is single-valued.
 */
import { OID } from './algorithms.js';
import { content, readString, TAG, type Tlv } from './der.js';
import { FAIL_INFO_CODES, ScepError, type FailInfo } from './errors.js';

/** Request message types a server receives (CertPoll is the RFC 8894 name of GetCertInitial). */
export type ScepMessageType = 'PKCSReq' | 'RenewalReq' | 'CertPoll' | 'GetCert' | 'GetCRL';

export const MESSAGE_TYPE_CODES: Readonly<Record<ScepMessageType | 'CertRep', number>> = {
  CertRep: 3,
  RenewalReq: 17,
  PKCSReq: 19,
  CertPoll: 20,
  GetCert: 21,
  GetCRL: 22,
};

const REQUEST_TYPES = new Map<number, ScepMessageType>([
  [17, 'RenewalReq'],
  [19, 'PKCSReq'],
  [20, 'CertPoll'],
  [21, 'GetCert'],
  [22, 'GetCRL'],
]);

export function requestTypeOf(code: number): ScepMessageType | undefined {
  return REQUEST_TYPES.get(code);
}

export type PkiStatus = 'SUCCESS' | 'FAILURE' | 'PENDING';
export const PKI_STATUS_CODES: Readonly<Record<PkiStatus, number>> = { SUCCESS: 0, FAILURE: 2, PENDING: 3 };

export function pkiStatusOf(code: number): PkiStatus | undefined {
  return code === 0 ? 'SUCCESS' : code === 2 ? 'FAILURE' : code === 3 ? 'PENDING' : undefined;
}

export function failInfoOf(code: number): FailInfo | undefined {
  return (Object.keys(FAIL_INFO_CODES) as FailInfo[]).find((k) => FAIL_INFO_CODES[k] === code);
}

export const ATTRIBUTE_NAMES: Readonly<Record<string, string>> = {
  [OID.messageType]: 'messageType',
  [OID.pkiStatus]: 'pkiStatus',
  [OID.failInfo]: 'failInfo',
  [OID.senderNonce]: 'senderNonce',
  [OID.recipientNonce]: 'recipientNonce',
  [OID.transactionID]: 'transactionID',
  [OID.failInfoText]: 'failInfoText',
};

function single(attrs: ReadonlyMap<string, readonly Tlv[]>, type: string): Tlv | undefined {
  const values = attrs.get(type);
  if (!values) return undefined;
  if (values.length !== 1) throw new ScepError('badRequest', `The ${ATTRIBUTE_NAMES[type] ?? type} attribute must have one value`);
  return values[0];
}

/** A string attribute (transactionID, messageType, pkiStatus, failInfo, failInfoText). */
export function stringAttribute(attrs: ReadonlyMap<string, readonly Tlv[]>, type: string): string | undefined {
  const v = single(attrs, type);
  return v === undefined ? undefined : readString(v, ATTRIBUTE_NAMES[type] ?? type);
}

/** A decimal PrintableString attribute as a number (messageType, pkiStatus, failInfo). */
export function numberAttribute(attrs: ReadonlyMap<string, readonly Tlv[]>, type: string): number | undefined {
  const s = stringAttribute(attrs, type);
  if (s === undefined) return undefined;
  if (!/^\d{1,4}$/.test(s.trim())) throw new ScepError('badRequest', `The ${ATTRIBUTE_NAMES[type] ?? type} attribute is not a number`);
  return Number(s.trim());
}

/** An OCTET STRING attribute (senderNonce, recipientNonce). */
export function octetAttribute(attrs: ReadonlyMap<string, readonly Tlv[]>, type: string): Uint8Array | undefined {
  const v = single(attrs, type);
  if (v === undefined) return undefined;
  if (v.tag !== TAG.OCTET_STRING) throw new ScepError('badRequest', `The ${ATTRIBUTE_NAMES[type] ?? type} attribute is not an OCTET STRING`);
  return content(v);
}
