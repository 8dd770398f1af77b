/**
 * The conformance suite every DNS provisioner of ours passes (issue 29): TXT writes are additive, cleanUp removes
 * exactly its value, both are idempotent, and nothing else in the zone moves. The record set is read straight
 * from the authoritative server (`readTxt`), never through the provisioner, so a provisioner cannot grade itself.
 */
import { randomBytes } from 'node:crypto';
import type { DcvProvisioner } from '@certwright/sdk';
import type { Test } from 'tap';

export interface ConformanceTarget {
  /** The zone the provisioner writes in (without the trailing dot). */
  zone: string;
  /** The TXT values at `fqdn`, as the authoritative server answers them now (each value's strings joined). */
  readTxt(fqdn: string): Promise<string[]>;
  /** Whether the record passed to the provisioner names its zone (as the kernel always does). Default true. */
  passZone?: boolean;
}

/** An ACME-like token (43 characters of base64url). */
const token = (): string => randomBytes(32).toString('base64url');

export async function runDcvConformance(t: Test, provisioner: DcvProvisioner, target: ConformanceTarget): Promise<void> {
  const label = randomBytes(4).toString('hex');
  const name = `_acme-challenge.conf-${label}.${target.zone}`;
  const other = `_acme-challenge.other-${label}.${target.zone}`;
  const record = (fqdn: string, value: string) => ({ fqdn, type: 'TXT' as const, value, ttl: 60, ...(target.passZone === false ? {} : { zone: target.zone }) });
  const [a, b, c] = [token(), token(), token()];
  const sorted = (values: string[]) => [...values].sort();
  const at = async (fqdn: string) => sorted(await target.readTxt(fqdn));

  await t.test('conformance: additive TXT, exact clean-up, idempotent, nothing else touched', async (t) => {
    await provisioner.present(record(other, c));
    t.same(await at(other), [c], 'a second name in the zone holds its own value');
    const untouched = async (when: string) => t.same(await at(other), [c], `the second name is untouched ${when}`);

    await provisioner.present(record(name, a));
    t.same(await at(name), [a], 'present A: A is visible');
    await untouched('after present A');

    await provisioner.present(record(name, b));
    t.same(await at(name), sorted([a, b]), 'present B at the same name: A and B are visible');

    await provisioner.present(record(name, b));
    t.same(await at(name), sorted([a, b]), 'present B again: still exactly A and B');
    await untouched('after presenting B twice');

    await provisioner.cleanUp(record(name, a));
    t.same(await at(name), [b], 'cleanUp A: only B');

    await t.resolves(provisioner.cleanUp(record(name, a)), 'cleanUp A again: no error');
    t.same(await at(name), [b], 'cleanUp A again: still only B');
    await untouched('after cleaning A twice');

    await provisioner.cleanUp(record(name, b));
    t.same(await at(name), [], 'cleanUp B: no value left');
    await untouched('at the end');

    await provisioner.cleanUp(record(other, c));
    t.same(await at(other), [], 'the second name cleaned up too');
  });
}

/** Parses presentation-format TXT data (`"a" "b\"c"`, \DDD escapes) into the text it stands for. */
export function parseTxtPresentation(line: string): string {
  const bytes: number[] = [];
  const re = /"((?:[^"\\]|\\.)*)"/g;
  for (const m of line.matchAll(re)) {
    const s = m[1]!;
    for (let i = 0; i < s.length; i++) {
      if (s[i] === '\\' && /^\d{3}$/.test(s.slice(i + 1, i + 4))) {
        bytes.push(Number(s.slice(i + 1, i + 4)));
        i += 3;
      } else if (s[i] === '\\') {
        bytes.push(...Buffer.from(s[++i] ?? '', 'utf8'));
      } else bytes.push(...Buffer.from(s[i]!, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * A `readTxt` that asks the authoritative server on 127.0.0.1:`port` directly with kdig (Knot's dig, an
 * independent client), over TCP so that a large RRset is never cut.
 */
export function kdigTxt(port: number): (fqdn: string) => Promise<string[]> {
  return async (fqdn) => {
    const { execFile } = await import('node:child_process');
    const out = await new Promise<string>((resolve, reject) =>
      execFile('kdig', [`@127.0.0.1`, '-p', String(port), '+tcp', '+norecurse', '+short', '+timeout=3', fqdn, 'TXT'], (err, stdout, stderr) =>
        err ? reject(new Error(`kdig ${fqdn} TXT: ${err.message} ${stderr}`)) : resolve(stdout),
      ),
    );
    return out
      .split('\n')
      .filter((l) => l.trim().startsWith('"'))
      .map(parseTxtPresentation);
  };
}
