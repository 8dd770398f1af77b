import type { ConfigRegistry } from '../config-objects/registry.js';

export interface UiSettings {
  version: string;
  interfaceCustomization: { logo: string | null; headerStart: string | null; headerEnd: string | null; announcements: unknown[] };
  termsOfServices: string[];
}

/**
 * The answer is public and may carry a 1 MiB logo: kept this long, so a flood of anonymous calls is not
 * a flood of database reads. A change on this node applies at once; on another node within this delay.
 */
const TTL_MS = 5_000;

/** What GET /api/v1/ui/ answers, per tenant, from the system configuration and the terms of service. */
export class UiSettingsSource {
  private readonly cache = new Map<string, { at: number; settings: Promise<UiSettings> }>();

  constructor(
    private readonly registry: ConfigRegistry,
    private readonly version: string,
    private readonly clock: () => number = Date.now,
  ) {
    for (const type of ['system-configuration', 'terms-of-service']) registry.onChange(type, (tenant) => this.cache.delete(tenant));
  }

  get(tenant: string): Promise<UiSettings> {
    const now = this.clock();
    const cached = this.cache.get(tenant);
    if (cached && now - cached.at < TTL_MS) return cached.settings;
    const settings = this.read(tenant);
    const entry = { at: now, settings };
    this.cache.set(tenant, entry);
    settings.catch(() => {
      if (this.cache.get(tenant) === entry) this.cache.delete(tenant);
    });
    return settings;
  }

  private async read(tenant: string): Promise<UiSettings> {
    const entry = await this.registry.resolve('system-configuration', tenant, 'interface_customization');
    const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
    const terms = await this.registry.listStored('terms-of-service', tenant);
    return {
      version: this.version,
      interfaceCustomization: {
        logo: text(entry?.logo),
        headerStart: text(entry?.headerStart),
        headerEnd: text(entry?.headerEnd),
        announcements: Array.isArray(entry?.announcements) ? entry.announcements : [],
      },
      termsOfServices: terms.map((t) => t.name),
    };
  }
}
