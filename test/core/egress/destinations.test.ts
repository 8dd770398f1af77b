import t from 'tap';
import { patternRank, pickProxy } from '../../../core/egress/destinations.js';

t.test('patterns: exact > longest *. suffix > *; the apex is not below its wildcard', async (t) => {
  t.equal(patternRank('example.com', 'example.com'), 1000);
  t.equal(patternRank('Example.COM', 'example.com'), 1000, 'case-insensitive');
  t.equal(patternRank('*.example.com', 'a.example.com'), '.example.com'.length);
  t.equal(patternRank('*.example.com', 'example.com'), -1);
  t.equal(patternRank('*.example.com', 'badexample.com'), -1);
  t.equal(patternRank('*', 'anything'), 0);
  t.equal(patternRank('example.com', 'a.example.com'), -1);
});

t.test('pickProxy: the most specific pattern wins, ties by name, none matching: direct', async (t) => {
  const proxies = [
    { name: 'zeta', destinations: ['*'] },
    { name: 'beta', destinations: ['*.example.com'] },
    { name: 'alpha', destinations: ['*.example.com'] },
    { name: 'deep', destinations: ['*.eu.example.com'] },
    { name: 'one', destinations: ['host.eu.example.com'] },
    { name: 'none' },
  ];
  t.equal(pickProxy(proxies, 'host.eu.example.com')?.name, 'one');
  t.equal(pickProxy(proxies, 'x.eu.example.com')?.name, 'deep');
  t.equal(pickProxy(proxies, 'www.example.com')?.name, 'alpha', 'equal ranks: the first name');
  t.equal(pickProxy(proxies, 'example.org')?.name, 'zeta');
  t.equal(pickProxy(proxies.filter((p) => p.name !== 'zeta'), 'example.org'), undefined);
});
