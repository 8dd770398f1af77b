import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { parseCertificatePem } from '../../../core/pki/x509/parse.js';

const run = promisify(execFile);
const DIR = '/usr/share/ca-certificates/mozilla';

/** What openssl says of one file: subject (RFC 2253, UTF-8) and both fingerprints. */
async function opensslView(file: string): Promise<{ subject: string; sha1: string; sha256: string }> {
  const fingerprint = (out: string): string => /Fingerprint=(.*)$/m.exec(out)![1]!.replace(/:/g, '').toLowerCase();
  const [withSubject, sha1] = await Promise.all([
    run('openssl', ['x509', '-in', file, '-noout', '-subject', '-nameopt', 'RFC2253,-esc_msb', '-fingerprint', '-sha256'], { encoding: 'utf8' }),
    run('openssl', ['x509', '-in', file, '-noout', '-fingerprint', '-sha1'], { encoding: 'utf8' }),
  ]);
  return { subject: /^subject=(.*)$/m.exec(withSubject.stdout)![1]!, sha1: fingerprint(sha1.stdout), sha256: fingerprint(withSubject.stdout) };
}

t.test("every root of Debian's ca-certificates decodes as openssl reads it", { skip: existsSync(DIR) ? false : `${DIR} is not installed` }, async (t) => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.crt')).sort();
  t.ok(files.length >= 100, `${files.length} root certificates`);
  const views = new Map<string, Awaited<ReturnType<typeof opensslView>>>();
  // Four openssl processes at a time: a few seconds for the whole bundle.
  for (let i = 0; i < files.length; i += 4) {
    await Promise.all(files.slice(i, i + 4).map(async (f) => views.set(f, await opensslView(join(DIR, f)))));
  }
  for (const f of files) {
    const pem = readFileSync(join(DIR, f), 'utf8');
    const view = views.get(f)!;
    let info;
    try {
      info = parseCertificatePem(pem);
    } catch (err) {
      t.fail(`${f}: ${(err as Error).message} ${(err as { detail?: string }).detail ?? ''}`);
      continue;
    }
    // Roots are self-signed: node's own check of the signature is the reference.
    const node = new X509Certificate(pem);
    t.same(
      { sha1: info.thumbprint, sha256: info.thumbprints.sha256, subject: info.dn, selfSigned: info.selfSigned },
      { ...view, selfSigned: node.verify(node.publicKey) },
      `${f}: thumbprints and subject as openssl prints them, self-signed as node verifies`,
    );
  }
});
