import t from 'tap';
import { kernelDb } from './harness.js';
import { lockSuite } from './suites/lock.js';

lockSuite(t, kernelDb);
