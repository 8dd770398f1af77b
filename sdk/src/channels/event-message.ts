import type { CertwrightEvent } from '../contracts/trigger-channel.js';

const DAY_MS = 86_400_000;

/** What people call each lifecycle event in a notification title. */
const EVENT_TITLES: Record<string, string> = {
  'CERTIFICATE-ISSUED': 'Certificate issued',
  'CERTIFICATE-IMPORTED': 'Certificate imported',
  'CERTIFICATE-RENEWED': 'Certificate renewed',
  'CERTIFICATE-REVOKED': 'Certificate revoked',
  'CERTIFICATE-EXPIRING': 'Certificate expiring',
  'CERTIFICATE-DISCOVERED': 'Certificate discovered',
  'REQUEST-PENDING': 'Certificate request pending approval',
  'REQUEST-APPROVED': 'Certificate request approved',
  'REQUEST-DENIED': 'Certificate request denied',
  'DCV-FAILURE': 'Domain validation failed',
};

export interface EventMessage {
  /** One line: what happened, to what. */
  title: string;
  /** The facts a person acts on, in order. */
  facts: { name: string; value: string }[];
  /** Title and facts as plain text lines. */
  text: string;
}

const iso = (ms: number | undefined | null) => (typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : '');

/** The CN of a distinguished name (`CN=www.example.com, O=Example`), or null. */
export function commonNameOf(dn: string | undefined | null): string | null {
  const m = /(?:^|[,/+]\s*)CN=((?:\\.|[^,+/])+)/i.exec(dn ?? '');
  return m ? m[1]!.trim() : null;
}

/**
 * The data templates (subject, body, chat text) are rendered from: the event as channels get it, plus
 * ready-made strings: `timestampIso`, `certificate.notBeforeIso|notAfterIso|daysLeft|commonName|sans`,
 * `message.title|text`. `certificate` and `trigger` are null when the event has none.
 */
export function eventTemplateView(event: CertwrightEvent, now: number): Record<string, unknown> {
  const cert = event.certificate;
  return {
    ...event,
    timestampIso: iso(event.timestamp),
    certificate: cert
      ? {
          ...cert,
          notBeforeIso: iso(cert.notBefore),
          notAfterIso: iso(cert.notAfter),
          daysLeft: Math.floor((cert.notAfter - now) / DAY_MS),
          commonName: commonNameOf(cert.dn),
          sans: (cert.subjectAlternateNames ?? []).map((s) => s.value).join(', '),
        }
      : null,
    trigger: event.trigger ?? null,
    message: defaultEventMessage(event, now),
  };
}

/** The default human message of an event, for channels whose target sets no template. */
export function defaultEventMessage(event: CertwrightEvent, now: number): EventMessage {
  const cert = event.certificate;
  let what = EVENT_TITLES[event.code] ?? `${event.code} (${event.status})`;
  if (event.code === 'CERTIFICATE-EXPIRING' && cert) {
    const days = event.trigger?.thresholdDays ?? Math.max(0, Math.floor((cert.notAfter - now) / DAY_MS));
    what = `Certificate expires in ${days} day${days === 1 ? '' : 's'}`;
  }
  const about = cert ? (commonNameOf(cert.dn) ?? cert.dn) : event.objectId ? `${event.objectType ?? 'object'} ${event.objectId}` : '';
  const title = about ? `${what}: ${about}` : what;
  const facts: { name: string; value: string }[] = [];
  const fact = (name: string, value: unknown) => {
    if (value !== undefined && value !== null && value !== '') facts.push({ name, value: String(value) });
  };
  if (cert) {
    fact('Subject', cert.dn);
    fact('Serial', cert.serial);
    fact('Issuer', cert.issuer);
    fact('Expires', iso(cert.notAfter));
    const sans = (cert.subjectAlternateNames ?? []).map((s) => s.value);
    fact('Names', sans.length > 5 ? `${sans.slice(0, 5).join(', ')} (+${sans.length - 5})` : sans.join(', '));
    fact('Owner', cert.owner);
    fact('Team', cert.team);
    if (cert.revoked) fact('Revoked', 'yes');
  }
  fact('Event', `${event.code} (${event.status})`);
  if (event.trigger) fact('Trigger', event.trigger.name);
  fact('Tenant', event.tenant);
  fact('At', iso(event.timestamp));
  const text = [title, ...facts.map((f) => `${f.name}: ${f.value}`)].join('\n');
  return { title, facts, text };
}
