/**
 * The resource schemas this service provider serves (RFC 7643 §4 core User and Group, §4.3 enterprise
 * User extension), in the representation of RFC 7643 §7 (GET /Schemas answers them). The same definitions
 * drive attribute names (case-insensitive, answered in their canonical case), types (boolean strings of
 * Entra ID accepted), mutability and what a PATCH path may name.
 */
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const SPC_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
export const RESOURCE_TYPE_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
export const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

export type AttributeType = 'string' | 'boolean' | 'decimal' | 'integer' | 'dateTime' | 'binary' | 'reference' | 'complex';
export type Mutability = 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';

export interface Attribute {
  name: string;
  type: AttributeType;
  multiValued: boolean;
  description: string;
  required: boolean;
  caseExact: boolean;
  mutability: Mutability;
  returned: 'always' | 'never' | 'default' | 'request';
  uniqueness: 'none' | 'server' | 'global';
  canonicalValues?: string[];
  referenceTypes?: string[];
  subAttributes?: Attribute[];
}

type Options = Partial<Omit<Attribute, 'name' | 'type' | 'description'>>;

const attr = (name: string, type: AttributeType, description: string, o: Options = {}): Attribute => ({
  name,
  type,
  multiValued: false,
  description,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...o,
});
const str = (name: string, description: string, o: Options = {}) => attr(name, 'string', description, o);
const complex = (name: string, description: string, subAttributes: Attribute[], o: Options = {}) => attr(name, 'complex', description, { ...o, subAttributes });

/** value, display, type, primary: the sub-attributes of emails, phoneNumbers, ims, photos… (RFC 7643 §2.4). */
const multi = (name: string, description: string, types: string[], valueType: AttributeType = 'string', extra: Attribute[] = []) =>
  complex(
    name,
    description,
    [
      attr('value', valueType, `The ${name} value`),
      str('display', 'A human-readable name, primarily used for display purposes'),
      str('type', 'A label indicating the function', { canonicalValues: types }),
      attr('primary', 'boolean', 'Whether this is the preferred value'),
      ...extra,
    ],
    { multiValued: true },
  );

export const USER_ATTRIBUTES: Attribute[] = [
  str('userName', 'Unique identifier for the User, used to authenticate', { required: true, uniqueness: 'server' }),
  complex('name', "The components of the user's real name", [
    str('formatted', 'The full name, formatted for display'),
    str('familyName', 'The family name'),
    str('givenName', 'The given name'),
    str('middleName', 'The middle name(s)'),
    str('honorificPrefix', 'The honorific prefix(es)'),
    str('honorificSuffix', 'The honorific suffix(es)'),
  ]),
  str('displayName', 'The name of the User, suitable for display'),
  str('nickName', 'The casual way to address the user'),
  attr('profileUrl', 'reference', "A URI pointing to the user's online profile", { referenceTypes: ['external'] }),
  str('title', "The user's title"),
  str('userType', 'The relationship between the organization and the user'),
  str('preferredLanguage', "The User's preferred written or spoken language"),
  str('locale', "The User's default location"),
  str('timezone', "The User's time zone"),
  attr('active', 'boolean', "The User's administrative status: the principal's `enabled` flag (a disabled principal cannot log in)"),
  str('password', 'Not kept: provisioned users authenticate through an identity provider', { mutability: 'writeOnly', returned: 'never' }),
  multi('emails', 'Email addresses for the user', ['work', 'home', 'other']),
  multi('phoneNumbers', 'Phone numbers for the User', ['work', 'home', 'mobile', 'fax', 'pager', 'other']),
  multi('ims', 'Instant messaging addresses for the User', ['aim', 'gtalk', 'icq', 'xmpp', 'msn', 'skype', 'qq', 'yahoo']),
  multi('photos', 'URLs of photos of the User', ['photo', 'thumbnail'], 'reference'),
  complex(
    'addresses',
    'A physical mailing address for this User',
    [
      str('formatted', 'The full mailing address'),
      str('streetAddress', 'The full street address component'),
      str('locality', 'The city or locality component'),
      str('region', 'The state or region component'),
      str('postalCode', 'The zip code or postal code component'),
      str('country', 'The country name component'),
      str('type', 'A label indicating the function', { canonicalValues: ['work', 'home', 'other'] }),
      attr('primary', 'boolean', 'Whether this is the preferred address'),
    ],
    { multiValued: true },
  ),
  complex(
    'groups',
    'The groups the user belongs to (the teams and roles its profile maps), read-only: change them through Groups',
    [
      str('value', 'The identifier of the group', { mutability: 'readOnly' }),
      attr('$ref', 'reference', 'The URI of the Group', { mutability: 'readOnly', referenceTypes: ['Group'] }),
      str('display', 'The name of the group', { mutability: 'readOnly' }),
      str('type', 'direct', { mutability: 'readOnly', canonicalValues: ['direct', 'indirect'] }),
    ],
    { multiValued: true, mutability: 'readOnly' },
  ),
  multi('entitlements', 'A list of entitlements for the User', []),
  multi('roles', 'A list of roles for the User (kept as attributes; local roles come from Groups and the profile)', []),
  multi('x509Certificates', 'A list of certificates issued to the User', [], 'binary'),
];

export const ENTERPRISE_ATTRIBUTES: Attribute[] = [
  str('employeeNumber', 'Numeric or alphanumeric identifier assigned to a person'),
  str('costCenter', 'Identifies the name of a cost center'),
  str('organization', 'Identifies the name of an organization'),
  str('division', 'Identifies the name of a division'),
  str('department', 'Identifies the name of a department'),
  complex('manager', "The User's manager", [
    str('value', 'The id of the SCIM resource representing the manager'),
    attr('$ref', 'reference', 'The URI of the manager', { referenceTypes: ['User'] }),
    str('displayName', 'The displayName of the manager', { mutability: 'readOnly' }),
  ]),
];

export const GROUP_ATTRIBUTES: Attribute[] = [
  str('displayName', 'The name of the Group: the team or role it maps to (its id too)', { required: true, mutability: 'immutable', uniqueness: 'server' }),
  complex(
    'members',
    "The profile's users who are members of the team or role",
    [
      str('value', 'The id of the member (a User of this profile)', { mutability: 'immutable' }),
      attr('$ref', 'reference', 'The URI of the member', { mutability: 'immutable', referenceTypes: ['User'] }),
      str('display', 'The userName of the member', { mutability: 'readOnly' }),
      str('type', 'User', { mutability: 'immutable', canonicalValues: ['User'] }),
    ],
    { multiValued: true },
  ),
];

/** Attributes every resource has (RFC 7643 §3.1), by name. */
export const COMMON_ATTRIBUTES: Attribute[] = [
  str('id', 'The unique identifier of the resource', { mutability: 'readOnly', returned: 'always', caseExact: true, uniqueness: 'server' }),
  str('externalId', "The identifier of the resource in the provisioning client's domain", { caseExact: true }),
  complex(
    'meta',
    'Resource metadata',
    [
      str('resourceType', 'The name of the resource type', { mutability: 'readOnly', caseExact: true }),
      attr('created', 'dateTime', 'When the resource was added', { mutability: 'readOnly' }),
      attr('lastModified', 'dateTime', 'When the resource was last changed', { mutability: 'readOnly' }),
      attr('location', 'reference', 'The URI of the resource', { mutability: 'readOnly', caseExact: true }),
      str('version', 'The version of the resource', { mutability: 'readOnly', caseExact: true }),
    ],
    { mutability: 'readOnly' },
  ),
];

export interface SchemaDefinition {
  id: string;
  name: string;
  description: string;
  attributes: Attribute[];
}

export const SCHEMAS: SchemaDefinition[] = [
  { id: USER_SCHEMA, name: 'User', description: 'User Account: a principal of the platform', attributes: USER_ATTRIBUTES },
  { id: ENTERPRISE_SCHEMA, name: 'EnterpriseUser', description: 'Enterprise User', attributes: ENTERPRISE_ATTRIBUTES },
  { id: GROUP_SCHEMA, name: 'Group', description: 'Group: a team or role of the platform', attributes: GROUP_ATTRIBUTES },
];

/** The named (sub-)attribute among `list`, case-insensitively (RFC 7643 §2.1). */
export function findAttribute(list: readonly Attribute[] | undefined, name: string): Attribute | undefined {
  const lower = name.toLowerCase();
  return list?.find((a) => a.name.toLowerCase() === lower);
}

/** The schema URN among the known ones, case-insensitively (urn values compare case-insensitively). */
export function knownSchema(urn: string): string | undefined {
  const lower = urn.toLowerCase();
  return SCHEMAS.find((s) => s.id.toLowerCase() === lower)?.id;
}

/** Largest `count` a list answers (ServiceProviderConfig filter.maxResults). */
export const MAX_RESULTS = 200;
/** Largest request body (bytes). */
export const BODY_LIMIT = 512 * 1024;

export function serviceProviderConfig(base: string): Record<string, unknown> {
  return {
    schemas: [SPC_SCHEMA],
    documentationUri: 'https://datatracker.ietf.org/doc/html/rfc7644',
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: true },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description: "Authentication with the SCIM profile's token (a raw credential) in Authorization: Bearer",
        specUri: 'https://www.rfc-editor.org/info/rfc6750',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function resourceTypes(base: string): Record<string, unknown>[] {
  return [
    {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'User Account',
      schema: USER_SCHEMA,
      schemaExtensions: [{ schema: ENTERPRISE_SCHEMA, required: false }],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
    },
    {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'Group',
      schema: GROUP_SCHEMA,
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` },
    },
  ];
}

export function schemaResource(schema: SchemaDefinition, base: string): Record<string, unknown> {
  return { schemas: [SCHEMA_SCHEMA], ...schema, meta: { resourceType: 'Schema', location: `${base}/Schemas/${schema.id}` } };
}
