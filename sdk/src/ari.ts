/**
 * The renewal window an ACME server suggests for a certificate (RFC 9773 ARI): from 2/3 to 5/6 of its lifetime,
 * as public CAs suggest, or, when an administrator asked for early renewal (`renewAfter` before that), the hour
 * from that date on. Shared by the ACME server plugin (its renewalInfo answers) and the kernel's automation
 * (a policy renewing "in the ARI window" uses the same window the certificate's client is told).
 */
export function ariSuggestedWindow(notBefore: number, notAfter: number, renewAfter: number | null = null): { start: number; end: number } {
  const lifetime = notAfter - notBefore;
  const start = notBefore + Math.floor((lifetime * 2) / 3);
  const end = notBefore + Math.floor((lifetime * 5) / 6);
  if (renewAfter !== null && renewAfter < start) return { start: renewAfter, end: Math.min(renewAfter + 3_600_000, notAfter) };
  return { start, end };
}
