import type { ConfigObject, ConfigObjectType, InstanceFactory, PluginManifest } from '@certwright/sdk';
import { CronExpressionParser } from 'cron-parser';
import { checkInstances, secretFields } from '../plugins/instances.js';
import type { ProvidedRegistry } from '../plugins/provided.js';

export const DCV_PROVIDER_TYPE = 'dcv-provider';
export const DCV_PROVISIONER_TYPE = 'dcv-provisioner';
export const DCV_POLICY_TYPE = 'dcv-policy';

const NAME = { type: 'string', minLength: 1, maxLength: 191, pattern: '^[A-Za-z0-9._@-]+$' } as const;
/** A domain, or `*.` + a domain (every name under it). */
const DOMAIN = { type: 'string', minLength: 1, maxLength: 253, pattern: '^(\\*\\.)?([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\\.)+[A-Za-z]{2,63}\\.?$' } as const;

/** A DCV policy as the runner reads it (defaults filled in by normalize). */
export interface DcvPolicy {
  name: string;
  description?: string;
  enabled: boolean;
  provider: string;
  provisioner?: string;
  domains: string[];
  schedule?: string;
  retries: { max: number; backoffSeconds: number };
  reuseDays: number;
  mode: 'standard' | 'persist';
  /** dns-persist-01: the issuer domain names the persistent record authorises, and the account it binds. */
  persist?: { issuerDomainNames: string[]; accountUri: string };
}

/** A plugin instance as configured: its type (registered by a plugin) and the configuration its schema validates. */
export interface DcvInstanceObject {
  name: string;
  type: string;
  description?: string;
  configuration: Record<string, unknown>;
}

interface InstanceTypeDeps {
  registry: ProvidedRegistry<InstanceFactory<unknown>>;
  manifestOf: (pluginId: string) => PluginManifest | undefined;
}

/**
 * DCV providers and provisioners: each an instance of a type a plugin registers (kind dcv-provider /
 * dcv-provisioner). The plugin's configSchema validates `configuration` (defaults filled in) and names its secret
 * fields (x-secret: sealed at rest, masked in answers); secrets proper (TSIG keys, API keys) belong in credentials,
 * which the configuration names.
 */
export function dcvInstanceType(kind: 'provider' | 'provisioner', deps: InstanceTypeDeps): ConfigObjectType {
  const manifestOfType = (type: string): PluginManifest | undefined => {
    const pluginId = deps.registry.pluginOf(type);
    return pluginId ? deps.manifestOf(pluginId) : undefined;
  };
  const plural = kind === 'provider' ? 'providers' : 'provisioners';
  return {
    type: kind === 'provider' ? DCV_PROVIDER_TYPE : DCV_PROVISIONER_TYPE,
    title: kind === 'provider' ? 'DCV providers' : 'DCV provisioners',
    noun: kind === 'provider' ? 'DCV provider' : 'DCV provisioner',
    exportKey: kind === 'provider' ? 'dcvProviders' : 'dcvProvisioners',
    description:
      kind === 'provider'
        ? 'Validation methods or services (dcv-dns: a token published through the policy\'s provisioner and read back from the authoritative servers).'
        : 'Where validation records are written (rfc2136, powerdns, exec…): the kernel finds the zone, follows CNAME delegation and checks propagation; the provisioner only writes and removes records.',
    basePath: `/api/v1/dcv/${plural}/`,
    tag: 'dcv',
    section: 'dcv',
    errorFamily: kind === 'provider' ? 'DCV-PROVIDER' : 'DCV-PROVISIONER',
    update: 'replace',
    serverOwned: ['createdAt', 'updatedAt'],
    properties: {
      name: NAME,
      type: { type: 'string', minLength: 1, maxLength: 64, description: `A ${kind} type a loaded dcv-${kind} plugin registers` },
      description: { type: ['string', 'null'], maxLength: 1024 },
      configuration: { type: 'object', additionalProperties: true, description: "Validated against the type's configSchema" },
    },
    required: ['name', 'type'],
    hooks: {
      normalize: (object) => {
        const configuration = { ...((object.configuration as Record<string, unknown> | undefined) ?? {}) };
        // The type's schema defaults, filled into what is stored (its errors are validate's to answer).
        const manifest = typeof object.type === 'string' ? manifestOfType(object.type) : undefined;
        if (manifest) checkInstances({ ...manifest, multiInstance: true }, [{ name: String(object.name), config: configuration }]);
        return { ...object, configuration };
      },
      secretsOf: (object) => (typeof object.type === 'string' ? secretFields(manifestOfType(object.type)?.configSchema as Record<string, unknown> | undefined).map((f) => `configuration.${f}`) : []),
      validate: (object, { previous }) => {
        const type = String(object.type);
        if (previous && previous.type !== type) return 'type: the type of an instance cannot change';
        const manifest = manifestOfType(type);
        if (!manifest) return `type: unknown ${kind} type "${type}" (loaded: ${deps.registry.types().join(', ') || 'none'})`;
        const problem = checkInstances({ ...manifest, multiInstance: true }, [{ name: String(object.name), config: object.configuration as Record<string, unknown> }]);
        if (problem) return `configuration: ${problem.replace(/^instance "[^"]*": /, '')}`;
      },
    },
  };
}

function cronProblem(expression: string): string | null {
  try {
    CronExpressionParser.parse(expression);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * DCV policies: which domains a provider validates (exact names, or `*.` suffixes for every name under), through
 * which provisioner, on which schedule, with how many retries, and for how long a validation stays reusable.
 * `mode: persist` keeps one long-lived record per domain (the CA/B Forum's dns-persist-01) instead of a fresh
 * record per validation.
 */
export function dcvPolicyType(): ConfigObjectType {
  return {
    type: DCV_POLICY_TYPE,
    title: 'DCV policies',
    noun: 'DCV policy',
    exportKey: 'dcvPolicies',
    description: 'Which domains are validated, by which provider through which provisioner, when, and for how long a validation is reused.',
    basePath: '/api/v1/dcv/policies/',
    tag: 'dcv',
    section: 'dcv',
    errorFamily: 'DCV-POLICY',
    update: 'replace',
    serverOwned: ['createdAt', 'updatedAt'],
    properties: {
      name: NAME,
      description: { type: ['string', 'null'], maxLength: 1024 },
      enabled: { type: 'boolean', description: 'false: not run by its schedule (true when absent)' },
      provider: { ...NAME, description: 'The DCV provider (/api/v1/dcv/providers/)' },
      provisioner: { ...NAME, description: 'The DCV provisioner that writes its records (/api/v1/dcv/provisioners/)' },
      domains: { type: 'array', minItems: 1, maxItems: 1000, uniqueItems: true, items: DOMAIN, description: 'Exact domains, or `*.example.com` for every name under example.com (validated at example.com)' },
      schedule: { type: ['string', 'null'], maxLength: 128, description: 'CRON expression of its runs (none: only when asked)' },
      retries: {
        type: 'object',
        additionalProperties: false,
        properties: {
          max: { type: 'integer', minimum: 0, maximum: 20, description: 'Attempts after the first (default 3)' },
          backoffSeconds: { type: 'integer', minimum: 1, maximum: 86400, description: 'Delay before the first retry, doubled each time (default 60)' },
        },
      },
      reuseDays: { type: 'integer', minimum: 0, maximum: 398, description: 'How long a validation stays reusable (default 30)' },
      mode: { enum: ['standard', 'persist'], description: '`persist`: one long-lived record per domain (dns-persist-01) instead of a fresh one per validation' },
      persist: {
        type: 'object',
        additionalProperties: false,
        required: ['issuerDomainNames', 'accountUri'],
        properties: {
          issuerDomainNames: { type: 'array', minItems: 1, maxItems: 10, items: { type: 'string', minLength: 1, maxLength: 253 } },
          accountUri: { type: 'string', minLength: 1, maxLength: 2048, pattern: '^https://' },
        },
      },
    },
    required: ['name', 'provider', 'domains'],
    references: [
      { field: 'provider', type: DCV_PROVIDER_TYPE },
      { field: 'provisioner', type: DCV_PROVISIONER_TYPE },
    ],
    hooks: {
      normalize: (object): ConfigObject => ({
        ...object,
        enabled: object.enabled !== false,
        retries: { max: 3, backoffSeconds: 60, ...((object.retries as object | undefined) ?? {}) },
        reuseDays: object.reuseDays ?? 30,
        mode: object.mode ?? 'standard',
        domains: (object.domains as string[]).map((d) => d.replace(/\.$/, '').toLowerCase()),
      }),
      validate: (object) => {
        if (typeof object.schedule === 'string' && object.schedule) {
          const problem = cronProblem(object.schedule);
          if (problem) return `schedule: not a CRON expression (${problem})`;
        }
        if (object.mode === 'persist' && !object.persist) return 'persist: required with mode persist (issuerDomainNames, accountUri)';
      },
    },
  };
}

/** The name a run validates for a policy entry: the domain itself, or the base of a `*.` suffix. */
export const validatedName = (entry: string): string => entry.replace(/^\*\./, '');

/** Whether `domain` falls under a policy's entries (an exact entry, or a name under a `*.` suffix, or its base). */
export function policyCovers(policy: Pick<DcvPolicy, 'domains'>, domain: string): boolean {
  const name = domain.replace(/\.$/, '').toLowerCase();
  return policy.domains.some((entry) => (entry.startsWith('*.') ? name === entry.slice(2) || name.endsWith(entry.slice(1)) : name === entry));
}
