import t from 'tap';
import { kernelDb } from './harness.js';
import { querySuite } from './suites/query.js';

querySuite(t, kernelDb);
