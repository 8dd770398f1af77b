/**
 * An OCSP responder (RFC 6960) for one CA, signing with the CA's own key (responderID byKey). The request
 * is read with the lean DER reader and every CertID answered in a BasicOCSPResponse: good, revoked (time
 * and reason) or unknown, with thisUpdate / nextUpdate and the request's nonce echoed. A CertID whose
 * issuerNameHash / issuerKeyHash do not name this CA (or whose hash algorithm is not one node has) is
 * unknown without asking; a request that does not parse answers malformedRequest, never an exception.
 */
import { createHash } from 'node:crypto';
import { children, expectTag, readOid, readTop, readUnsignedHex, TAG, value, whole } from '../der/reader.js';
import { bitString, explicit, octets, oid, seq, tlv } from '../der/writer.js';
import { enumerated, reasonCode } from '../crl/build.js';
import type { CaIdentity } from '../keys/ca-identity.js';
import { DIGEST_ALGORITHMS } from '../oids.js';
import { OCSP_NONCE } from './cert-id.js';

/** What the responder needs to know of one serial (lower-case hex, no leading zeros). */
export interface OcspStatus {
  status: 'good' | 'revoked' | 'unknown';
  /** Epoch ms, when revoked. */
  revokedAt?: number;
  /** RFC 5280 reason name, when revoked and known. */
  reason?: string;
}

export interface OcspRespondOptions {
  /** Epoch ms of producedAt and thisUpdate. Default: now. */
  now?: number;
  /** nextUpdate = thisUpdate + this. Default 3600. */
  validitySeconds?: number;
}

const BASIC_RESPONSE = '1.3.6.1.5.5.7.48.1.1';
/** A request is a handful of CertIDs; bigger ones are refused as malformed before anything is read. */
const MAX_REQUEST_BYTES = 64 * 1024;
const MAX_CERT_IDS = 256;

/** OCSPResponse without responseBytes: malformedRequest (1), internalError (2), tryLater (3), unauthorized (6). */
export const ocspError = (status: 1 | 2 | 3 | 6): Uint8Array => seq(enumerated(status));

const two = (n: number): string => String(n).padStart(2, '0');

/** GeneralizedTime, whole seconds, Z (RFC 6960 uses it for every time, whatever the year). */
export function generalizedTime(ms: number): Uint8Array {
  const d = new Date(Math.floor(ms / 1000) * 1000);
  const text = `${String(d.getUTCFullYear()).padStart(4, '0')}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}${two(d.getUTCHours())}${two(d.getUTCMinutes())}${two(d.getUTCSeconds())}Z`;
  return tlv(TAG.GENERALIZED_TIME, Buffer.from(text, 'latin1'));
}

interface ParsedRequest {
  certIds: { der: Uint8Array; hash: string | undefined; nameHash: Uint8Array; keyHash: Uint8Array; serial: string }[];
  /** The whole nonce Extension (echoed as it came). */
  nonce?: Uint8Array;
}

/** Reads an OCSPRequest; undefined when it is not one. */
function parseRequest(der: Uint8Array): ParsedRequest | undefined {
  if (der.length === 0 || der.length > MAX_REQUEST_BYTES) return undefined;
  try {
    const top = readTop(der, TAG.SEQUENCE, 'OCSPRequest');
    const [tbs, signature, extra] = children(der, top);
    if (!tbs || extra || (signature && signature.tag !== 0xa0)) return undefined;
    const fields = children(der, expectTag(tbs, TAG.SEQUENCE, 'tbsRequest'));
    let i = 0;
    if (fields[i]?.tag === 0xa0) i++; // version
    if (fields[i]?.tag === 0xa1) i++; // requestorName
    const list = fields[i++];
    if (!list) return undefined;
    const out: ParsedRequest = { certIds: [] };
    const requests = children(der, expectTag(list, TAG.SEQUENCE, 'requestList'));
    if (requests.length === 0 || requests.length > MAX_CERT_IDS) return undefined;
    for (const request of requests) {
      const [certId] = children(der, expectTag(request, TAG.SEQUENCE, 'Request'));
      const [alg, nameHash, keyHash, serial, more] = children(der, expectTag(certId ?? request, TAG.SEQUENCE, 'CertID'));
      if (!alg || !nameHash || !keyHash || !serial || more) return undefined;
      const [algOid] = children(der, expectTag(alg, TAG.SEQUENCE, 'hashAlgorithm'));
      out.certIds.push({
        der: whole(der, certId!),
        hash: DIGEST_ALGORITHMS[readOid(der, algOid ?? alg)],
        nameHash: value(der, expectTag(nameHash, TAG.OCTET_STRING, 'issuerNameHash')),
        keyHash: value(der, expectTag(keyHash, TAG.OCTET_STRING, 'issuerKeyHash')),
        serial: readUnsignedHex(der, serial),
      });
    }
    const extensions = fields[i];
    if (extensions) {
      if (extensions.tag !== 0xa2 || fields[i + 1]) return undefined;
      const [list2] = children(der, extensions);
      for (const ext of children(der, expectTag(list2 ?? extensions, TAG.SEQUENCE, 'requestExtensions'))) {
        const [extOid] = children(der, expectTag(ext, TAG.SEQUENCE, 'Extension'));
        if (readOid(der, extOid ?? ext) === OCSP_NONCE) out.nonce = whole(der, ext);
      }
    }
    return out;
  } catch {
    return undefined;
  }
}

/** A reason the inventory holds that RFC 5280 does not name is left out rather than failing the answer. */
function knownReason(reason: string): number | undefined {
  try {
    return reasonCode(reason);
  } catch {
    return undefined;
  }
}

/** The answer for one CertID: CertStatus DER. */
function certStatus(status: OcspStatus): Uint8Array {
  if (status.status === 'good') return tlv(0x80, new Uint8Array(0));
  if (status.status === 'unknown') return tlv(0x82, new Uint8Array(0));
  const info = [generalizedTime(status.revokedAt ?? 0)];
  const code = status.reason ? knownReason(status.reason) : undefined;
  if (code !== undefined) info.push(explicit(0, enumerated(code)));
  return tlv(0xa1, ...info);
}

/** A responder for one CA: its name and key hashes are computed once per hash algorithm. */
export class OcspResponder {
  private readonly hashes = new Map<string, { name: Buffer; key: Buffer }>();
  private readonly responderId: Uint8Array;

  constructor(private readonly ca: CaIdentity, private readonly clock: () => number = Date.now) {
    // ResponderID byKey [2] EXPLICIT KeyHash: SHA-1 of the responder's public key bytes.
    this.responderId = explicit(2, octets(createHash('sha1').update(ca.publicKeyBytes).digest()));
  }

  private issuerHashes(hash: string): { name: Buffer; key: Buffer } | undefined {
    let known = this.hashes.get(hash);
    if (!known) {
      try {
        known = { name: createHash(hash).update(this.ca.name).digest(), key: createHash(hash).update(this.ca.publicKeyBytes).digest() };
      } catch {
        return undefined;
      }
      this.hashes.set(hash, known);
    }
    return known;
  }

  /** The signed OCSPResponse (DER) to `requestDer`; `lookup` is asked about serials of this CA only. */
  async respond(requestDer: Uint8Array, lookup: (serial: string) => Promise<OcspStatus>, options: OcspRespondOptions = {}): Promise<Uint8Array> {
    const request = parseRequest(requestDer);
    if (!request) return ocspError(1);
    const now = options.now ?? this.clock();
    const thisUpdate = generalizedTime(now);
    const nextUpdate = explicit(0, generalizedTime(now + (options.validitySeconds ?? 3600) * 1000));
    const singles = await Promise.all(
      request.certIds.map(async (id) => {
        const mine = id.hash ? this.issuerHashes(id.hash) : undefined;
        const status: OcspStatus = mine && mine.name.equals(id.nameHash) && mine.key.equals(id.keyHash) ? await lookup(id.serial) : { status: 'unknown' };
        return seq(id.der, certStatus(status), thisUpdate, nextUpdate);
      }),
    );
    const tbs = seq(this.responderId, generalizedTime(now), seq(...singles), ...(request.nonce ? [explicit(1, seq(request.nonce))] : []));
    const basic = seq(tbs, this.ca.signer.algorithm, bitString(this.ca.signer.sign(tbs)), explicit(0, seq(this.ca.certificateDer)));
    return seq(enumerated(0), explicit(0, seq(oid(BASIC_RESPONSE), octets(basic))));
  }
}
