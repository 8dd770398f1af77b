/** What finalize needs from a CSR (RFC 8555 §7.4): its DNS names and IP addresses, and a valid signature. */
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { AcmeProblem } from './problems.js';
import type { Identifier } from './store.js';

export interface CsrNames {
  pem: string;
  commonName: string | null;
  identifiers: Identifier[];
}

const ipText = (bytes: Buffer): string => (bytes.length === 4 ? [...bytes].join('.') : (bytes.toString('hex').match(/.{4}/g) ?? []).map((g) => g.replace(/^0+(?=.)/, '')).join(':'));

export async function csrNames(derB64url: unknown): Promise<CsrNames> {
  if (typeof derB64url !== 'string' || !/^[A-Za-z0-9_-]+$/.test(derB64url)) throw new AcmeProblem('malformed', 'The payload needs csr, base64url DER');
  const der = Buffer.from(derB64url, 'base64url');
  let csr: pkijs.CertificationRequest;
  try {
    csr = pkijs.CertificationRequest.fromBER(der);
  } catch {
    throw new AcmeProblem('badCSR', 'The CSR is not a DER PKCS#10 request');
  }
  let verified = false;
  try {
    verified = await csr.verify();
  } catch {
    verified = false;
  }
  if (!verified) throw new AcmeProblem('badCSR', 'The CSR signature does not verify');
  const cn = csr.subject.typesAndValues.find((tv) => tv.type === '2.5.4.3');
  const identifiers: Identifier[] = [];
  for (const attribute of csr.attributes ?? []) {
    if (attribute.type !== '1.2.840.113549.1.9.14') continue;
    const extensions = new pkijs.Extensions({ schema: attribute.values[0] });
    for (const extension of extensions.extensions) {
      if (extension.extnID !== '2.5.29.17') continue;
      const names = extension.parsedValue as pkijs.AltName | undefined;
      for (const name of names?.altNames ?? []) {
        if (name.type === 2) identifiers.push({ type: 'dns', value: String(name.value).toLowerCase() });
        else if (name.type === 7) identifiers.push({ type: 'ip', value: ipText(Buffer.from((name.value as asn1js.OctetString).valueBlock.valueHexView)) });
        else throw new AcmeProblem('badCSR', 'The CSR names something other than DNS names and IP addresses');
      }
    }
  }
  const pem = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE REQUEST-----\n`;
  return { pem, commonName: cn ? String(cn.value.valueBlock.value) : null, identifiers };
}
