import t from 'tap';
import { isoDate } from '../../../core/inventory/search/iso-date.js';

/** The CSV export's date formatter writes what Date#toISOString writes, for any epoch ms. */
t.test('isoDate equals toISOString', async (t) => {
  const samples = [0, 1, 999, 1000, 59_999, 86_399_999, 86_400_000, 951_782_400_000, 951_868_799_999, 1_700_000_000_123, 253_402_300_799_999];
  for (let i = 0; i < 20_000; i++) samples.push(Math.floor(Math.random() * 253_402_300_800_000));
  const wrong = samples.filter((ms) => isoDate(ms) !== new Date(ms).toISOString());
  t.same(wrong, [], `${samples.length} dates from 1970 to 9999`);
  // Outside the fast range it defers to toISOString: before 1970, after 9999, fractions.
  for (const ms of [-1, -86_400_001, 253_402_300_800_000, 8.64e15, 1.5]) t.equal(isoDate(ms), new Date(ms).toISOString(), String(ms));
  t.throws(() => isoDate(Number.NaN), RangeError, 'an invalid date fails as toISOString does');
});
