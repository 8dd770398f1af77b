import type { DecodedPkcs12 } from '../pkcs12/decode.js';
import { certificateView } from './x509.js';

/** An opened PKCS#12 file: its certificates as the x509 decoder answers them (Horizon's names), the rest as decoded. */
export const pkcs12View = (p: DecodedPkcs12) => ({ ...p, certificates: p.certificates.map(certificateView) });

