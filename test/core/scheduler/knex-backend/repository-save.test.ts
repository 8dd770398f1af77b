import t from 'tap';
import { kernelDb } from './harness.js';
import { saveSuite } from './suites/save.js';

saveSuite(t, kernelDb);
