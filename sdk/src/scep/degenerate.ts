/**
 * Degenerate (signer-less) SignedData: the inside of a CertRep (the issued certificate and its chain, or a CRL,
 * RFC 8894 §3.3.2), GetCACert and EST answers (cms/certs-only.ts). Assembled from the DER as given: pkijs
 * re-parses every certificate (milliseconds), and these are built per request.
 */
import { OID } from './algorithms.js';
import { children, expectTag, parseDer, raw, readOid, TAG, type Tlv } from './der.js';
import { ctx, oid, seq, set, smallInteger } from './der-writer.js';
import { guarded, ScepError } from './errors.js';

/** ContentInfo(SignedData) with no signers, id-data without content, `certificatesDer` in order, `crlsDer`. */
export function degenerateSignedData(certificatesDer: readonly Uint8Array[], crlsDer: readonly Uint8Array[] = []): Uint8Array {
  for (const c of [...certificatesDer, ...crlsDer]) parseDer(c); // one well-formed TLV each, or a ScepError
  const parts = [smallInteger(1), set(), seq(oid(OID.data))];
  if (certificatesDer.length) parts.push(ctx(0, ...certificatesDer));
  if (crlsDer.length) parts.push(ctx(1, ...crlsDer));
  parts.push(set());
  return seq(oid(OID.signedData), ctx(0, seq(...parts)));
}

/** The certificates and CRLs of a (degenerate or not) SignedData ContentInfo: the reverse of the above. */
export function readDegenerateSignedData(der: Uint8Array): { certificatesDer: Uint8Array[]; crlsDer: Uint8Array[] } {
  return guarded('badRequest', 'Malformed certs-only SignedData', () => {
    const [typeOid, explicit] = children(expectTag(parseDer(der), TAG.SEQUENCE, 'ContentInfo'));
    if (readOid(typeOid, 'contentType') !== OID.signedData) throw new ScepError('badRequest', 'Not a SignedData');
    const f = children(expectTag(children(expectTag(explicit, 0xa0, 'content'))[0], TAG.SEQUENCE, 'SignedData'));
    const certs = f.find((x) => x.tag === 0xa0);
    const crls = f.find((x) => x.tag === 0xa1);
    const copy = (t: Tlv) => Uint8Array.from(raw(t));
    return { certificatesDer: certs ? children(certs).map(copy) : [], crlsDer: crls ? children(crls).map(copy) : [] };
  });
}
