/**
 * CAA (RFC 8659) as the ACME validation checks it, against a real BIND9 serving CAA records: no record set
 * (any CA), the CA's identity in `issue`, another CA's, the closest record set winning over a parent's,
 * `issuewild` for wildcards, an empty issue value (nobody) and an unknown critical property.
 */
import { Resolver } from 'node:dns/promises';
import t from 'tap';
import { checkCaa } from '../../../plugins/protocol-acme/src/caa.js';
import { startBind9 } from '../../helpers/bind9.js';

const bind = await startBind9(t, 'caa.test', [
  'ours IN CAA 0 issue "certwright.example"',
  'theirs IN CAA 0 issue "other-ca.example"',
  'sub.theirs IN CAA 0 issue "certwright.example; accounturi=https://x"',
  'nobody IN CAA 0 issue ";"',
  'wild IN CAA 0 issue "other-ca.example"',
  'wild IN CAA 0 issuewild "certwright.example"',
  'strict IN CAA 128 tbs "unknown"',
  'mailonly IN CAA 0 iodef "mailto:security@caa.test"',
]);
const resolver = new Resolver();
resolver.setServers([`127.0.0.1:${bind.port}`]);
const ids = ['certwright.example'];
const check = (name: string, wildcard = false) => checkCaa(resolver, `${name}.caa.test`, wildcard, ids);

t.equal(await check('free'), null, 'no CAA record set anywhere: authorized');
t.equal(await check('ours'), null, 'issue names this CA: authorized');
t.equal(await check('host.ours'), null, "a parent's record set applies to names below it");
t.match(await check('theirs'), { type: 'urn:ietf:params:acme:error:caa', status: 403 }, 'issue names another CA: refused');
t.equal(await check('sub.theirs'), null, 'the closest record set wins (with parameters after the domain)');
t.match(await check('nobody'), { type: 'urn:ietf:params:acme:error:caa' }, 'issue ";" forbids every CA');
t.equal(await check('wild', true), null, 'issuewild governs wildcards');
t.match(await check('wild'), { type: 'urn:ietf:params:acme:error:caa' }, 'while issue governs the name itself');
t.match(await check('strict'), { detail: /unknown critical property/ }, 'an unknown critical property forbids issuance');
t.equal(await check('mailonly'), null, 'iodef alone authorizes every CA');
t.match(await checkCaa(resolver, 'ours.caa.test', false, []), { type: 'urn:ietf:params:acme:error:caa' }, 'a CA without identities is never named');
