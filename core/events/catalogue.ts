import type { EventStatus } from './store.js';
import { LIFECYCLE_EVENT_CODES } from './codes.js';
import { PKI_CONNECTOR_EVENTS } from '../pki/connectors/events.js';
import { PROFILE_EVENTS } from '../profiles/events.js';
import { REQUEST_EVENTS } from '../requests/events.js';

/**
 * Every event code the platform raises, in one place (docs/events.md is generated from it). An event is
 * `{code, module, status, principal?, objectType?, objectId?, payload}`; the entry says which module
 * raises it, with which statuses, about what object, and what its payload carries.
 *
 * test/core/events/codes.test.ts scans core/ for codes that are raised but missing here. Plugins raise
 * their own codes (module = the plugin's id); they are documented with the plugin.
 */
export interface EventCodeEntry {
  code: string;
  module: string;
  description: string;
  statuses: readonly EventStatus[];
  /** `objectType` of the events; objectId then names the object (its name or _id). */
  objectType: string | null;
  /** Payload member → what it holds. */
  payload: Readonly<Record<string, string>>;
  /** Reserved for the lifecycle workflows (triggers already react to it): not raised by this version. */
  reserved?: boolean;
}

const none = {} as const;

/** Security objects changed through the API: the principal is who changed them. */
const securityChange = (code: string, objectType: string, what: string, payload: Record<string, string>): EventCodeEntry => ({
  code,
  module: 'security',
  description: what,
  statuses: ['success'],
  objectType,
  payload,
});

const L = LIFECYCLE_EVENT_CODES;

/** What every configuration change carries (core/config-objects/registry.ts), never a field's value. */
const CONFIG_CHANGE_PAYLOAD = { type: 'The configuration type', name: 'The object\'s name (its key)', changed: 'Names of the fields set or changed (never their values)' };

/** Configuration objects of the registry (core/config-objects): the principal is who changed them. */
const configChange = (code: string, what: string): EventCodeEntry => ({
  code,
  module: 'configuration',
  description: what,
  statuses: ['success'],
  objectType: 'the configuration type (credential, http-proxy, storage, …)',
  payload: CONFIG_CHANGE_PAYLOAD,
});

export const EVENT_CATALOGUE: readonly EventCodeEntry[] = [
  configChange('CONFIG-CREATED', 'A configuration object was created (API, import or first start)'),
  configChange('CONFIG-UPDATED', 'A configuration object was changed'),
  configChange('CONFIG-DELETED', 'A configuration object was deleted'),
  // Certificates (inventory, request workflows, expiry, discovery).
  {
    code: L.imported,
    module: 'inventory',
    description: 'A certificate was imported into the inventory (POST /api/v1/certificates/)',
    statuses: ['success'],
    objectType: 'certificate',
    payload: { thumbprint: 'SHA-1 thumbprint (hex)', dn: 'Subject DN', profile: 'Profile, or null' },
  },
  {
    code: L.expiring,
    module: 'triggers',
    description: 'A certificate came within an expiry threshold of a trigger (the expiry scan raises it once per threshold)',
    statuses: ['warning'],
    objectType: 'certificate',
    payload: { thresholdDays: 'The threshold reached, in days', notAfter: 'End of validity (epoch ms)' },
  },
  {
    code: L.issued,
    module: 'webra',
    description: 'A certificate was issued by a request workflow (enroll, or a consumed challenge); failure: the PKI connector finally refused it',
    statuses: ['success', 'failure'],
    objectType: 'certificate',
    payload: { requestId: 'Request _id', profile: 'Profile', workflow: 'Workflow', pkiConnector: 'PKI connector that issued', dn: 'Subject DN', serial: 'Serial (hex)', reason: 'Why it was refused (failures only)' },
  },
  {
    code: L.renewed,
    module: 'webra',
    description: 'A certificate was renewed: the event names the new certificate',
    statuses: ['success', 'failure'],
    objectType: 'certificate',
    payload: { requestId: 'Request _id', profile: 'Profile', previousCertificateId: 'The certificate it renews', reason: 'Why it was refused (failures only)' },
  },
  {
    code: L.revoked,
    module: 'webra',
    description: 'A certificate was revoked through its PKI connector (revoke workflow)',
    statuses: ['success', 'failure'],
    objectType: 'certificate',
    payload: { requestId: 'Request _id', profile: 'Profile', reason: 'Revocation reason (upper case), or why the connector refused (failures)' },
  },
  { code: L.discovered, module: 'discovery', description: 'Discovery found a certificate new to the inventory', statuses: ['success'], objectType: 'certificate', payload: none, reserved: true },
  { code: L.requestPending, module: 'webra', description: 'A request awaits approval (submitted with request permission only)', statuses: ['success'], objectType: 'request', payload: { requestId: 'Request _id', workflow: 'Workflow', profile: 'Profile', requester: 'Who submitted it' } },
  { code: L.requestApproved, module: 'webra', description: 'A pending request was approved', statuses: ['success'], objectType: 'request', payload: { requestId: 'Request _id', workflow: 'Workflow', profile: 'Profile', requester: 'Who submitted it', approver: 'Who approved it' } },
  { code: L.requestDenied, module: 'webra', description: 'A pending request was denied', statuses: ['success'], objectType: 'request', payload: { requestId: 'Request _id', workflow: 'Workflow', profile: 'Profile', requester: 'Who submitted it', approver: 'Who denied it' } },
  {
    code: L.dcvFailure,
    module: 'dcv',
    description: 'A domain control validation failed (a run, its clean-up, or a failure an external system reported); triggers on dcv_failure react to it',
    statuses: ['failure'],
    objectType: 'domain',
    payload: { policy: 'The DCV policy', error: 'Why', attempt: 'Attempt number (0: the first; null: a clean-up)', final: 'true when no retry follows', reported: 'true when an external system reported it' },
  },
  {
    code: L.automationFailure,
    module: 'automation',
    description: 'The lifecycle task could not renew (or revoke the predecessor of) a certificate an automation policy covers; retried with backoff until the policy\'s retries are spent. Triggers on automation_failure react to it',
    statuses: ['failure'],
    objectType: 'certificate',
    payload: { policy: 'The automation policy', step: 'renew or revoke-superseded', error: 'Why', attempt: 'Attempt number (1: the first)', final: 'true when no retry follows', nextAttemptAt: 'When it is tried again (epoch ms), null when final' },
  },
  {
    code: 'DCV-RUN-STARTED',
    module: 'dcv',
    description: 'A validation run of a domain started (it holds the domain: no other node validates it meanwhile)',
    statuses: ['success'],
    objectType: 'domain',
    payload: { policy: 'The DCV policy', provider: 'Its provider', attempt: 'Attempt number (0: the first)' },
  },
  {
    code: 'DCV-RECORD-PUBLISHED',
    module: 'dcv',
    description: 'A validation record was written through the policy\'s provisioner and every authoritative server answers it',
    statuses: ['success'],
    objectType: 'domain',
    payload: { policy: 'The DCV policy', fqdn: 'Where it was written (after CNAME delegation)', zone: 'Its zone', delegatedFrom: 'The validation name a CNAME sent there (null: none)', type: 'Record type' },
  },
  {
    code: 'DCV-RECORD-REMOVED',
    module: 'dcv',
    description: 'A validation record was removed (other values at the name stay)',
    statuses: ['success'],
    objectType: 'domain',
    payload: { policy: 'The DCV policy', fqdn: 'The name', zone: 'Its zone', type: 'Record type' },
  },
  {
    code: 'CERTIFICATE-GRADE-CHANGED',
    module: 'grading',
    description: 'A grading policy run gave a certificate another grade than its previous run (a first grade raises nothing); warning when worse, success when better',
    statuses: ['success', 'warning'],
    objectType: 'certificate',
    payload: { policy: 'The grading policy', previous: 'The grade before (A–F)', grade: 'The grade now (A–F)', failed: 'The rules it fails now, as ruleset/rule' },
  },
  {
    code: 'GRADING-RUN-COMPLETED',
    module: 'grading',
    description: 'A grading policy run graded the whole inventory of a tenant (GET /api/v1/certificate/grading/policies/:policy/run); the principal is who asked for it',
    statuses: ['success'],
    objectType: 'grading-policy',
    payload: { policy: 'The grading policy', graded: 'Certificates graded', changed: 'Certificates whose grade changed', unreadable: 'Certificates whose PEM could not be decoded (skipped)' },
  },
  {
    code: 'DCV-VALIDATED',
    module: 'dcv',
    description: 'A domain was validated (by a run, or reported by an external system)',
    statuses: ['success'],
    objectType: 'domain',
    payload: { policy: 'The DCV policy', method: 'dns-txt, dns-persist-01, or what the reporter said', validatedUntil: 'Reusable until (epoch ms)', reported: 'true when an external system reported it' },
  },
  {
    code: 'DCV-RUN-CANCELLED',
    module: 'dcv',
    description: 'The queued validations of a policy were dropped',
    statuses: ['success'],
    objectType: 'dcv-policy',
    payload: { policy: 'The DCV policy', cancelled: 'How many queued runs were dropped' },
  },
  // Labels.
  ...(['CREATED', 'UPDATED'] as const).map(
    (verb): EventCodeEntry => ({
      code: `LABEL-${verb}`,
      module: 'inventory',
      description: `A certificate label definition was ${verb.toLowerCase()} (/api/v1/certificate/labels/)`,
      statuses: ['success'],
      objectType: 'label',
      payload: { regex: 'The regular expression values must match, or null' },
    }),
  ),
  { code: 'LABEL-DELETED', module: 'inventory', description: 'A certificate label definition was deleted', statuses: ['success'], objectType: 'label', payload: none },
  // PKI: certificate authorities and their CRLs.
  ...(['CREATE', 'UPDATE', 'DELETE'] as const).map(
    (kind): EventCodeEntry => ({
      code: `CA-${kind}`,
      module: 'pki',
      description: `A certificate authority was ${kind === 'CREATE' ? 'imported' : `${kind.toLowerCase()}d`} (/api/v1/cas/)`,
      statuses: ['success'],
      objectType: 'ca',
      payload: { dn: 'Subject DN of the CA', thumbprint: 'SHA-1 thumbprint (hex)', trusted: 'Trusted as a chain anchor', trustedForClientAuthentication: 'Trusted for client certificate logins' },
    }),
  ),
  {
    code: 'CRL-UPDATE',
    module: 'pki',
    description: 'A new CRL of a CA was downloaded, verified and cached',
    statuses: ['success'],
    objectType: 'ca',
    payload: { url: 'Where it was downloaded from', crlNumber: 'CRL number', entries: 'Revoked serials listed', nextUpdate: 'nextUpdate of the CRL (epoch ms)' },
  },
  {
    code: 'CRL-REFUSED',
    module: 'pki',
    description: 'A downloaded CRL was refused (wrong signer, older than the cached one): the cached CRL is kept',
    statuses: ['failure'],
    objectType: 'ca',
    payload: { url: 'Where it was downloaded from', error: 'Why it was refused' },
  },
  // Scheduled tasks.
  {
    code: 'SCHEDULED-TASK-RUN',
    module: 'scheduler',
    description: 'A scheduled task ran (on its schedule, or on GET /api/v1/scheduler/tasks/:key/run)',
    statuses: ['success', 'failure', 'warning'],
    objectType: 'scheduled-task',
    payload: { type: 'Task type', manual: 'Run on demand rather than on schedule', summary: "The task's own summary of the run" },
  },
  // Triggers.
  ...(['CREATED', 'UPDATED', 'DELETED'] as const).map(
    (verb): EventCodeEntry => ({
      code: `TRIGGER-${verb}`,
      module: 'triggers',
      description: `A trigger was ${verb.toLowerCase()} (/api/v1/triggers/)`,
      statuses: ['success'],
      objectType: 'trigger',
      payload: { trigger: 'The trigger as the triggers API shows it (secrets never included)' },
    }),
  ),
  {
    code: 'TRIGGER-RUN',
    module: 'triggers',
    description:
      'A trigger was run by hand: for one certificate (PATCH /api/v1/certificates/run/{id}/:triggerName/:event), or as a test with no certificate (PATCH /api/v1/triggers {name}: objectType trigger, objectId its name, payload.test true)',
    statuses: ['success', 'failure'],
    objectType: 'certificate',
    payload: { trigger: 'Trigger name', event: 'Trigger event it was run for', delivered: 'Whether the channel accepted it', detail: "The channel's detail, or null", test: 'true for a test run (no certificate)' },
  },
  // Security.
  {
    code: 'SEC-LOGIN-FAILURE',
    module: 'security',
    description: 'A local-account, certificate or interactive (OpenID Connect) login failed (JWKS failures are only in the technical log)',
    statuses: ['failure'],
    objectType: 'principal',
    payload: {
      method: 'Authentication method (`interactive`: a browser login through an identity provider; `x509`: a client certificate)',
      address: 'Client address',
      route: 'Route the login was attempted on',
      provider: 'Interactive and X509 logins: the identity provider',
      reason:
        'Interactive and X509 logins: why (interactive: state-missing, state-expired, state-invalid, refused-by-provider, no-principal, principal-disabled, unknown-provider…; x509: unreadable, not-yet-valid, expired, no-client-auth-eku, untrusted-ca, invalid-chain, revoked, ocsp-unknown, ocsp-unavailable, no-authorization, forwarded-from-untrusted-address); the detail is in the technical log',
      subjectDn: 'X509: the certificate subject, once it could be read',
      serial: 'X509: the certificate serial number (hex)',
      source: 'X509: where the certificate came from (`tls` or `forwarded`)',
      detail: 'X509: more on the reason (the failing check)',
      header: 'X509: the forwarded-certificate header, when it was involved',
      connectionAddress: 'X509: the TCP peer that sent a forwarded certificate',
    },
  },
  {
    code: 'SEC-LOGIN-SUCCESS',
    module: 'security',
    description: 'An interactive login (OpenID Connect, GET /api/v1/security/identity/providers/:name/callback) opened a session',
    statuses: ['success'],
    objectType: 'principal',
    payload: {
      method: '`interactive`',
      provider: 'The identity provider',
      address: 'Client address',
      rolesAdded: 'Roles the claims granted at this login',
      rolesRemoved: 'Roles this provider had granted that the claims no longer name',
      teamsAdded: 'Teams the claims granted at this login',
      teamsRemoved: 'Teams this provider had granted that the claims no longer name',
    },
  },
  {
    code: 'SEC-LOGIN-TARGETED',
    module: 'security',
    description: 'Failed logins for one identifier, from any addresses, reached security.throttle.identifierAlertAttempts (or a multiple) within the window: an alert; the identifier itself is not locked',
    statuses: ['failure'],
    objectType: 'principal',
    payload: { failures: 'Failures counted in the window', address: 'Client address of the last one' },
  },
  securityChange('SEC-LOCAL-CREATED', 'local-identity', 'A local account was created', { name: 'Display name', email: 'Email', enabled: 'Enabled', hasPassword: 'Created with a password' }),
  securityChange('SEC-LOCAL-UPDATED', 'local-identity', 'A local account was changed', { name: 'Display name, when changed', email: 'Email, when changed', enabled: 'Enabled, when changed', passwordChanged: 'The password was set too' }),
  securityChange('SEC-LOCAL-DELETED', 'local-identity', 'A local account was deleted', none),
  {
    code: 'SEC-LOCAL-PASSWORD-CHANGED',
    module: 'security',
    description: "A local account's password was changed (failure: a self-service change with a wrong current password)",
    statuses: ['success', 'failure'],
    objectType: 'local-identity',
    payload: { selfService: 'Changed by the account itself', reason: 'Why it failed (failures only)' },
  },
  securityChange('SEC-PWD-CREATED', 'password-policy', 'A password policy was created', CONFIG_CHANGE_PAYLOAD),
  securityChange('SEC-PWD-UPDATED', 'password-policy', 'A password policy was changed', CONFIG_CHANGE_PAYLOAD),
  securityChange('SEC-PWD-DELETED', 'password-policy', 'A password policy was deleted', CONFIG_CHANGE_PAYLOAD),
  securityChange('SEC-PRINC-CREATED', 'principal', "A principal's information was created", { permissions: 'Permissions', roles: 'Roles', teams: 'Teams' }),
  securityChange('SEC-PRINC-UPDATED', 'principal', "A principal's information was replaced", { permissions: 'Permissions', roles: 'Roles', teams: 'Teams' }),
  securityChange('SEC-PRINC-DELETED', 'principal', "A principal's information was deleted", none),
  securityChange('SEC-ROLE-CREATED', 'role', 'A role was created', CONFIG_CHANGE_PAYLOAD),
  securityChange('SEC-ROLE-UPDATED', 'role', 'A role was changed', CONFIG_CHANGE_PAYLOAD),
  securityChange('SEC-ROLE-DELETED', 'role', 'A role was deleted', CONFIG_CHANGE_PAYLOAD),
  securityChange('SEC-TEAM-CREATED', 'team', 'A team was created', CONFIG_CHANGE_PAYLOAD),
  securityChange('SEC-TEAM-UPDATED', 'team', 'A team was changed', CONFIG_CHANGE_PAYLOAD),
  securityChange('SEC-TEAM-DELETED', 'team', 'A team was deleted', CONFIG_CHANGE_PAYLOAD),
  securityChange('SEC-TEAM-MIGRATED', 'team', "A team's certificates and members moved to another team (PATCH /api/v1/security/teams/:previousTeam/:newTeam)", {
    previousTeam: 'Team before',
    newTeam: 'Team after',
    mode: 'How the move was done',
    members: 'Members moved',
  }),
  ...(['ROLE', 'TEAM'] as const).flatMap((kind): EventCodeEntry[] => {
    const objectType = kind.toLowerCase();
    const payload = { identifiers: 'Principals added or removed', via: 'configuration or webra (team managers)' };
    return [
      securityChange(`SEC-${kind}-MEMBERS-ADDED`, objectType, `Members were added to a ${objectType}`, { ...payload, manager: 'Added as managers, when given' }),
      securityChange(`SEC-${kind}-MEMBERS-REMOVED`, objectType, `Members were removed from a ${objectType}`, payload),
    ];
  }),
  // PKI connectors and queues, certificate profiles, requests and challenges (issue 7).
  ...PKI_CONNECTOR_EVENTS,
  ...PROFILE_EVENTS,
  ...REQUEST_EVENTS,
];

/** The catalogue by code. */
export const EVENT_CODES: ReadonlyMap<string, EventCodeEntry> = new Map(EVENT_CATALOGUE.map((e) => [e.code, e]));
