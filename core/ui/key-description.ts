/** Field sizes of the named curves the decoders name (oids.ts CURVES). */
const CURVE_BITS: Record<string, number> = {
  secp256r1: 256,
  secp384r1: 384,
  secp521r1: 521,
  secp256k1: 256,
  brainpoolp256r1: 256,
  brainpoolp384r1: 384,
  brainpoolp512r1: 512,
};

const FIXED: Record<string, string> = { 'ed-25519': 'Ed25519', 'ed-448': 'Ed448', 'x-25519': 'X25519', 'x-448': 'X448', 'ml-dsa-44': 'ML-DSA-44', 'ml-dsa-65': 'ML-DSA-65', 'ml-dsa-87': 'ML-DSA-87' };

export interface KeyDescription {
  keyType: string;
  keySize?: number;
  curve?: string;
}

/** The decoders' compat keyType (`rsa-2048`, `ec-secp256r1`, `ed-25519`) as a form shows it. */
export function describeKey(compat: string): KeyDescription {
  const sized = /^(rsa|dsa)-(\d+)$/.exec(compat);
  if (sized) return { keyType: sized[1]!.toUpperCase(), keySize: Number(sized[2]) };
  if (compat.startsWith('ec-')) {
    const curve = compat.slice(3);
    const bits = CURVE_BITS[curve];
    return { keyType: 'EC', ...(curve !== 'explicit' ? { curve } : {}), ...(bits !== undefined ? { keySize: bits } : {}) };
  }
  return { keyType: FIXED[compat] ?? compat.toUpperCase() };
}
