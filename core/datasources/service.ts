import type { Logger } from 'pino';
import type { ConfigRegistry } from '../config-objects/registry.js';
import { DATASOURCE_TYPE } from './config-type.js';
import { FetchFailure } from './errors.js';
import { fetchDatasource, type FetchDeps, type Fetched } from './fetch.js';
import type { Datasource, DatasourceRecord } from './model.js';
import type { DatasourceResults, DatasourceStatus } from './results.js';

/** A refresh as answered: the datasource's status after it, and the records when it succeeded. */
export interface Refreshed {
  status: DatasourceStatus;
  records: DatasourceRecord[] | null;
}

/**
 * Fetching datasources and keeping their results: a scheduled or requested refresh records its outcome
 * (datasource_results), an inline definition (a flow testing one) is only fetched. A failure is recorded and
 * logged with its reason, which never holds a secret.
 */
export class Datasources {
  constructor(
    private readonly deps: { registry: ConfigRegistry; results: DatasourceResults; fetch: FetchDeps; clock: () => number; logger: Logger },
  ) {}

  /** The stored datasource (defaults filled in), or null. */
  async definition(tenant: string, name: string): Promise<Datasource | null> {
    return (await this.deps.registry.resolve(DATASOURCE_TYPE, tenant, name)) as unknown as Datasource | null;
  }

  async names(tenant: string): Promise<string[]> {
    return (await this.deps.registry.listStored(DATASOURCE_TYPE, tenant)).map((s) => s.name).sort();
  }

  async status(tenant: string, name: string): Promise<DatasourceStatus> {
    return this.deps.results.status(tenant, name);
  }

  /** Fetches a stored datasource now and records the outcome; never throws for a failed fetch. */
  async refresh(tenant: string, d: Datasource): Promise<Refreshed> {
    const started = this.deps.clock();
    try {
      const fetched = await this.fetch(tenant, d);
      await this.deps.results.succeeded(tenant, d.name, fetched.records, fetched.durationMs);
      return { status: await this.deps.results.status(tenant, d.name), records: fetched.records };
    } catch (err) {
      if (!(err instanceof FetchFailure)) throw err;
      this.deps.logger.warn({ tenant, datasource: d.name, kind: d.kind, reason: err.message }, 'datasource fetch failed');
      await this.deps.results.failed(tenant, d.name, err.message, this.deps.clock() - started);
      return { status: await this.deps.results.status(tenant, d.name), records: null };
    }
  }

  /** Fetches a definition without recording anything (FetchFailure on failure). */
  fetch(tenant: string, d: Datasource): Promise<Fetched> {
    return fetchDatasource(tenant, d, this.deps.fetch, this.deps.clock);
  }
}
