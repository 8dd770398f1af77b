export { DecodeWorkers, threadsFor, type DecodeAnswer, type PoolStats, type WorkerLimits } from './pool.js';
export { decodeNow, isHeavy, type DecodeTask } from './decode-tasks.js';
