export { KnexBackend, type KnexBackendOptions } from './backend.js';
export { detectEngine, type Engine, type LockStrategy, type ServerInfo } from './engine.js';
export { KnexJobLogger, LOGS_TABLE } from './logger.js';
export { KnexJobRepository, type KnexJobRepositoryOptions } from './repository.js';
export { JOBS_TABLE } from './rows.js';
