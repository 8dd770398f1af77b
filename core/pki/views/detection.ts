import { decodeCrl } from '../crl/decode.js';
import { parseCsr } from '../csr/parse.js';
import type { Detection, DetectedType } from '../detect.js';
import { decodeInput } from '../input.js';
import { decodeOcsp } from '../ocsp/decode.js';
import { decodeOpenSsh } from '../openssh/decode.js';
import { decodePkcs7 } from '../pkcs7/decode.js';
import { decodeTsp } from '../tsp/decode.js';
import { parseCertificate } from '../x509/parse.js';
import { crlView } from './crl.js';
import { csrView } from './csr.js';
import { ocspView } from './ocsp.js';
import { tspView } from './tsp.js';
import { certificateView } from './x509.js';

/**
 * The names Horizon's clients switch on (the MCP server's detect_file: certificate, csr, crl, bundle,
 * ocsp-response, timestamping-response, openssh-cert). Types they do not name keep Certwright's name.
 */
const VENDOR_TYPES: Partial<Record<DetectedType, string>> = {
  pkcs7: 'bundle',
  'tsp-reply': 'timestamping-response',
  'tsp-query': 'timestamping-request',
  'openssh-certificate': 'openssh-cert',
};

/** The decoded content of a detected object, as its own decoder answers it; none for keys, PKCS#12 and JWKs. */
function valueOf(type: DetectedType, input: string | Uint8Array): unknown {
  switch (type) {
    case 'certificate':
      return certificateView(parseCertificate(decodeInput(input).der));
    case 'csr':
      return csrView(parseCsr(decodeInput(input).der));
    case 'crl':
      return crlView(decodeCrl(decodeInput(input).der));
    case 'pkcs7': {
      const bundle = decodePkcs7(decodeInput(input).der);
      return { ...bundle, certificates: bundle.certificates.map(certificateView), crls: bundle.crls.map(crlView) };
    }
    case 'ocsp-request':
    case 'ocsp-response':
      return ocspView(decodeOcsp(decodeInput(input).der));
    case 'tsp-query':
    case 'tsp-reply':
      return tspView(decodeTsp(decodeInput(input).der));
    case 'openssh-certificate':
    case 'openssh-public-key':
      return decodeOpenSsh(input);
    default:
      return undefined;
  }
}

export interface DetectionView extends Omit<Detection, 'type'> {
  type: string;
  value?: unknown;
}

/** {type, value} as the vendor's clients read it, with Certwright's encoding, label and details beside. */
export function detectionView(detection: Detection, input: string | Uint8Array | Record<string, unknown>): DetectionView {
  const view: DetectionView = { ...detection, type: VENDOR_TYPES[detection.type] ?? detection.type };
  if (typeof input !== 'object' || input instanceof Uint8Array) {
    // Detection reads the outer structure only: an object it named but its decoder refuses keeps no value.
    try {
      const value = valueOf(detection.type, input);
      if (value !== undefined) view.value = value;
    } catch {
      /* type without value */
    }
  }
  return view;
}

export const DETECTED_TYPE_NAMES = [
  'certificate', 'csr', 'crl', 'bundle', 'pkcs12', 'private-key-pkcs1', 'private-key-pkcs8', 'private-key-sec1', 'encrypted-private-key',
  'public-key', 'openssh-private-key', 'openssh-public-key', 'openssh-cert', 'ocsp-request', 'ocsp-response', 'timestamping-request',
  'timestamping-response', 'jwk', 'unknown',
] as const;
