const ARMOR = /\s*(-----(?:BEGIN|END) [A-Z0-9 #]+-----)\s*/g;

/**
 * A request as people paste it into a form, tidied for the PKI decoders (which do all the parsing):
 * armor lines on lines of their own, the base64 between them without whitespace (indentation from YAML
 * or a mail, CRLF, newlines turned into spaces: the decoders would read inner spaces as form-encoded
 * `+`), and a lone BEGIN or END line dropped (what is left is bare base64, which the decoders take).
 */
export function tidyPastedPem(text: string): string {
  const lines = text
    .replace(ARMOR, '\n$1\n')
    .split('\n')
    .map((line) => (line.startsWith('-----') ? line : line.replace(/\s+/g, '')))
    .filter((line) => line.length > 0);
  const begins = lines.filter((l) => l.startsWith('-----BEGIN ')).length;
  const ends = lines.filter((l) => l.startsWith('-----END ')).length;
  return (begins === ends ? lines : lines.filter((l) => !l.startsWith('-----'))).join('\n');
}
