export { loadConfig, ConfigError, DEFAULT_CONFIG_FILE } from './load.js';
export type { LoadConfigOptions } from './load.js';
export type { CertwrightConfig, EndpointEntry, DeepPartial } from './types.js';
export { ENV_BINDINGS } from './env.js';
