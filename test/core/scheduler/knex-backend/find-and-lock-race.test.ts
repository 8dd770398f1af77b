import t from 'tap';
import { kernelDb } from './harness.js';
import { raceSuite } from './suites/race.js';

raceSuite(t, kernelDb);
