import t from 'tap';
import { kernelDb } from './harness.js';
import { agendaSuite } from './suites/agenda.js';

agendaSuite(t, kernelDb);
