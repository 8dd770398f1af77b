import t from 'tap';
import { CAPABILITIES } from '@certwright/sdk';
import { HostPolicy, RAW_HOST_MEMO, RAW_HOST_MEMO_MAX_LENGTH } from '../../../core/http/host-policy.js';

/**
 * The per-request memo of raw Host values (core/http/host-policy.ts) is bounded (issue 24): in count, and in the
 * length of the values it keeps, so a flood of distinct or huge junk hosts cannot grow it.
 */
t.test('the raw Host memo keeps at most RAW_HOST_MEMO short values, and still answers every host', async (t) => {
  const policy = HostPolicy.fromConfig({ allowedHosts: ['localhost', 'pki.example.com'], certwright: { endpoints: null } });
  let most = 0;
  for (let i = 0; i < RAW_HOST_MEMO * 3 + 17; i++) {
    policy.allowsAnyOnHost(`junk-${i}.example`, CAPABILITIES);
    most = Math.max(most, policy.memoSize);
  }
  t.equal(most, RAW_HOST_MEMO, `filled up to ${RAW_HOST_MEMO}, never past it`);
  t.equal(policy.allowsAnyOnHost('PKI.example.com:443', CAPABILITIES), true, 'an allowed host still answers');
  t.equal(policy.allowsAnyOnHost('junk-1.example', CAPABILITIES), false, 'a junk host still does not');

  const size = policy.memoSize;
  const huge = `${'a'.repeat(RAW_HOST_MEMO_MAX_LENGTH + 1000)}.example`;
  t.equal(policy.allowsAnyOnHost(huge, CAPABILITIES), false);
  t.equal(policy.allowsAnyOnHost(`localhost:${'9'.repeat(RAW_HOST_MEMO_MAX_LENGTH)}`, CAPABILITIES), true, 'a long value is looked up all the same');
  t.equal(policy.memoSize, size, 'values longer than RAW_HOST_MEMO_MAX_LENGTH are not kept');
});
