import t from 'tap';
import { kernelDb } from './harness.js';
import { loggerSuite } from './suites/logger.js';

loggerSuite(t, kernelDb);
