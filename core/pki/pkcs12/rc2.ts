/**
 * RC2-CBC decryption (RFC 2268), by hand because OpenSSL 3 moved RC2 to its legacy provider, which
 * node does not load: node:crypto cannot open the RC2-40 certificate bags of legacy PKCS#12 files
 * (`openssl pkcs12 -legacy`, Windows exports before 2019, Java keytool before 8u301). Decrypt only:
 * we never write RC2.
 */

/** RFC 2268's PITABLE (a permutation of 0..255 from the digits of pi). */
const PITABLE = Buffer.from(
  [
    'd978f9c419ddb5ed28e9fd794aa0d89d',
    'c67e37832b76538e624c6488448bfba2',
    '179a59f587b34f1361456d8d09817d32',
    'bd8f40eb86b77b0bf09521225c6b4e82',
    '54d66593ce60b21c7356c014a78cf1dc',
    '1275ca1f3bbee4d1423dd430a33cb626',
    '6fbf0eda4669075727f21d9bbc944303',
    'f811c7f690ef3ee706c3d52fc8661ed7',
    '08e8eade8052eef784aa72ac354d6a2a',
    '961ad2715a1549744b9fd05e0418a4ec',
    'c2e0416e0f51cbcc2491af50a1f47039',
    '997c3a8523b8b47afc02365b25559731',
    '2d5dfa98e38a92ae05df2910676cbac9',
    'd300e6cfe19ea82c6316013f58e289a9',
    '0d38341bab33ffb0bb480c5fb9b1cd2e',
    'c5f3db47e5a59c770aa62068fe7fc1ad',
  ].join(''),
  'hex',
);

/** The 64 16-bit subkeys for `key` at `effectiveBits` (RFC 2268 §2). */
export function rc2ExpandKey(key: Uint8Array, effectiveBits: number): Uint16Array {
  const T = key.length;
  if (T < 1 || T > 128 || effectiveBits < 1 || effectiveBits > 1024) throw new RangeError('RC2 key or effective key length out of range');
  const L = new Uint8Array(128);
  L.set(key);
  for (let i = T; i < 128; i++) L[i] = PITABLE[(L[i - 1]! + L[i - T]!) & 0xff]!;
  const T8 = Math.ceil(Math.min(effectiveBits, 1024) / 8);
  const TM = 0xff >> (8 * T8 - effectiveBits);
  L[128 - T8] = PITABLE[L[128 - T8]! & TM]!;
  for (let i = 127 - T8; i >= 0; i--) L[i] = PITABLE[L[i + 1]! ^ L[i + T8]!]!;
  const K = new Uint16Array(64);
  for (let i = 0; i < 64; i++) K[i] = L[2 * i]! | (L[2 * i + 1]! << 8);
  return K;
}

const ror = (x: number, s: number): number => ((x >>> s) | (x << (16 - s))) & 0xffff;

/** Decrypts one 8-byte block in place at `at` (RFC 2268 §4). */
export function rc2DecryptBlock(K: Uint16Array, block: Uint8Array, at = 0): void {
  const R = [0, 1, 2, 3].map((i) => block[at + 2 * i]! | (block[at + 2 * i + 1]! << 8));
  let j = 63;
  const mixRound = (): void => {
    for (let i = 3; i >= 0; i--) {
      const s = [1, 2, 3, 5][i]!;
      const a = R[(i + 3) & 3]!;
      const b = R[(i + 2) & 3]!;
      const c = R[(i + 1) & 3]!;
      R[i] = (ror(R[i]!, s) - K[j--]! - (a & b) - (~a & c)) & 0xffff;
    }
  };
  const mashRound = (): void => {
    for (let i = 3; i >= 0; i--) R[i] = (R[i]! - K[R[(i + 3) & 3]! & 63]!) & 0xffff;
  };
  for (let r = 0; r < 5; r++) mixRound();
  mashRound();
  for (let r = 0; r < 6; r++) mixRound();
  mashRound();
  for (let r = 0; r < 5; r++) mixRound();
  for (let i = 0; i < 4; i++) {
    block[at + 2 * i] = R[i]! & 0xff;
    block[at + 2 * i + 1] = R[i]! >> 8;
  }
}

/** RC2-CBC decryption without padding removal (the caller checks PKCS#7 padding). */
export function rc2CbcDecrypt(key: Uint8Array, effectiveBits: number, iv: Uint8Array, data: Uint8Array): Uint8Array {
  if (data.length === 0 || data.length % 8 !== 0 || iv.length !== 8) throw new RangeError('RC2-CBC input is not a whole number of blocks');
  const K = rc2ExpandKey(key, effectiveBits);
  const out = Uint8Array.from(data);
  for (let at = out.length - 8; at >= 0; at -= 8) {
    rc2DecryptBlock(K, out, at);
    const prev = at === 0 ? iv : data.subarray(at - 8, at);
    for (let i = 0; i < 8; i++) out[at + i]! ^= prev[i]!;
  }
  return out;
}
