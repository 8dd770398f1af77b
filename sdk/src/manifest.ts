import type { Capability, PluginKind } from './kinds.js';

/** A plugin's manifest.json, as validated by {@link manifestSchema}. */
export interface PluginManifest {
  id: string;
  name: string;
  version: string;
  kind: PluginKind;
  sdk: string;
  entry: string;
  description?: string;
  capability?: Capability;
  license?: string;
  configSchema?: Record<string, unknown>;
  /** Trigger channels only: JSON Schema of a trigger's `target` for this channel (secret fields carry "x-secret": true). */
  targetSchema?: Record<string, unknown>;
  multiInstance?: boolean;
  egress?: string[];
  migrations?: string;
  jobs?: string[];
  docs?: { summary?: string; links?: { title: string; url: string }[] };
}
