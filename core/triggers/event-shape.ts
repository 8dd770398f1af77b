import type { CertwrightEvent, EventCertificate, EventTrigger } from '@certwright/sdk';
import type { StoredEvent } from '../events/store.js';
import type { CertificateObject } from '../inventory/types.js';

/** What a channel is told about the certificate an event concerns (client-compat §3 names). */
export function eventCertificateOf(c: CertificateObject): EventCertificate {
  return {
    _id: c._id,
    dn: c.dn,
    serial: c.serial,
    issuer: c.issuer,
    notBefore: c.notBefore,
    notAfter: c.notAfter,
    revoked: c.revoked,
    profile: c.profile ?? null,
    owner: c.owner ?? null,
    team: c.team ?? null,
    contactEmail: c.contactEmail ?? null,
    subjectAlternateNames: (c.subjectAlternateNames ?? []).map((s) => ({ sanType: s.sanType, value: s.value })),
    labels: (c.labels ?? []).map((l) => ({ key: l.key, value: l.value })),
  };
}

const payloadOf = (text: string): Record<string, unknown> => {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

/** The event handed to a channel: the stored event, the certificate it concerns, and the trigger being run. */
export function channelEventOf(event: StoredEvent, certificate: CertificateObject | null, trigger: EventTrigger): CertwrightEvent {
  return {
    id: event.id,
    code: event.code,
    module: event.module,
    status: event.status as CertwrightEvent['status'],
    tenant: event.tenant,
    principal: event.principal,
    objectType: event.objectType,
    objectId: event.objectId,
    payload: payloadOf(event.payload),
    timestamp: event.createdAt,
    certificate: certificate ? eventCertificateOf(certificate) : null,
    trigger,
  };
}
