/**
 * CAA (RFC 8659): before an identifier is validated, the relevant record set — the first non-empty one
 * climbing from the name to its parents — must authorize one of the CA's identities (`issue`, or
 * `issuewild` for a wildcard when present). No record set: any CA may issue. An unknown critical property
 * forbids issuance. IP addresses have no CAA.
 */
import type { Resolver } from 'node:dns/promises';
import { problemOf, type ProblemDocument } from './problems.js';

type CaaRecord = { critical: number; issue?: string; issuewild?: string; [tag: string]: unknown };

const KNOWN = new Set(['issue', 'issuewild', 'iodef', 'critical', 'issuemail', 'contactemail', 'contactphone']);

/** The domain part of an issue value (`ca.example; accounturi=…` → `ca.example`); empty: nobody. */
const issuerOf = (value: string): string => value.split(';')[0]!.trim().toLowerCase();

export async function checkCaa(resolver: Pick<Resolver, 'resolveCaa'>, name: string, wildcard: boolean, identities: readonly string[]): Promise<ProblemDocument | null> {
  const labels = name.toLowerCase().replace(/\.$/, '').split('.');
  for (let i = 0; i < labels.length; i++) {
    const at = labels.slice(i).join('.');
    let records: CaaRecord[];
    try {
      records = (await resolver.resolveCaa(at)) as CaaRecord[];
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'ENODATA' || code === 'ENOTFOUND') continue;
      // A lookup that fails (not an empty answer) forbids issuance (RFC 8659 §3).
      return problemOf('caa', `CAA lookup for ${at} failed (${code ?? (err as Error).message})`);
    }
    if (records.length === 0) continue;
    for (const r of records) {
      const tag = Object.keys(r).find((k) => k !== 'critical');
      if (r.critical && tag && !KNOWN.has(tag.toLowerCase())) return problemOf('caa', `CAA record at ${at} has an unknown critical property ${tag}`);
    }
    const wild = records.filter((r) => typeof r.issuewild === 'string');
    const relevant = wildcard && wild.length ? wild.map((r) => r.issuewild!) : records.filter((r) => typeof r.issue === 'string').map((r) => r.issue!);
    // Records without issue properties (iodef only) authorize every CA.
    if (relevant.length === 0 && !(wildcard && wild.length)) return null;
    const allowed = relevant.map(issuerOf).some((issuer) => issuer !== '' && identities.map((d) => d.toLowerCase()).includes(issuer));
    return allowed ? null : problemOf('caa', `CAA records at ${at} do not authorize this CA (${identities.join(', ') || 'no CAA identity configured'})`);
  }
  return null;
}
