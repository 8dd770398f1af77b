/** TXT text ↔ the presentation form PowerDNS keeps in a record's `content` (`"abc" "def"`, `\"`, `\\`, `\DDD`). */

/** The content PowerDNS stores for `value`: character-strings of at most 255 bytes, quoted and escaped. */
export function txtContent(value: string): string {
  const bytes = Buffer.from(value, 'utf8');
  const strings: string[] = [];
  for (let i = 0; i < bytes.length || i === 0; i += 255) {
    let s = '';
    for (const byte of bytes.subarray(i, i + 255)) {
      if (byte === 0x22 || byte === 0x5c) s += `\\${String.fromCharCode(byte)}`;
      else if (byte >= 0x20 && byte < 0x7f) s += String.fromCharCode(byte);
      else s += `\\${String(byte).padStart(3, '0')}`;
    }
    strings.push(`"${s}"`);
    if (bytes.length === 0) break;
  }
  return strings.join(' ');
}

/** The text a stored `content` stands for (its strings joined), so values compare whatever escaping was used. */
export function txtText(content: string): string {
  const bytes: number[] = [];
  for (const m of content.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
    const s = m[1]!;
    for (let i = 0; i < s.length; i++) {
      const ch = s[i]!;
      if (ch === '\\' && /^\d{3}$/.test(s.slice(i + 1, i + 4))) {
        bytes.push(Number(s.slice(i + 1, i + 4)));
        i += 3;
      } else if (ch === '\\') {
        bytes.push(...Buffer.from(s[++i] ?? '', 'utf8'));
      } else {
        bytes.push(...Buffer.from(ch, 'utf8'));
      }
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
