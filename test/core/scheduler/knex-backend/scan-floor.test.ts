import t from 'tap';
import { FLOOR_TTL_MS, ScanFloors } from '../../../../core/scheduler/knex-backend/scan-floor.js';

// ScanFloors on its own (no database): where MariaDB's due claims may start their scan.

t.test('a full scan that takes a job sets the floor there, for FLOOR_TTL_MS', async (t) => {
  const floors = new ScanFloors();
  const first = floors.begin('a', false, 0);
  t.equal(first.from, undefined, 'no floor yet: the whole due range');
  floors.end(first, 100, 0);
  t.equal(floors.begin('a', false, 10).from, 100);
  t.equal(floors.begin('b', false, 10).from, undefined, 'per name');
  t.equal(floors.begin('a', true, 10).from, undefined, 'a full scan ignores it');
  t.equal(floors.begin('a', false, FLOOR_TTL_MS - 1).from, 100);
  t.equal(floors.begin('a', false, FLOOR_TTL_MS).from, undefined, 'expired');
});

t.test('a bounded scan raises the floor to the job it took, unless something moved it meanwhile', async (t) => {
  const floors = new ScanFloors();
  floors.end(floors.begin('a', false, 0), 100, 0);
  const bounded = floors.begin('a', false, 1);
  floors.end(bounded, 150, 1);
  t.equal(floors.begin('a', false, 2).from, 150);

  const racing = floors.begin('a', false, 3);
  floors.lowered('a', 120);
  floors.end(racing, 160, 3);
  t.equal(floors.begin('a', false, 4).from, 120, 'a write lowered it while the claim ran: it stays lowered');

  const slow = floors.begin('a', false, 5);
  const fast = floors.begin('a', false, 5);
  floors.end(fast, 130, 5);
  floors.end(slow, 125, 5);
  t.equal(floors.begin('a', false, 6).from, 130, 'never lowered by a claim that ended later');
});

t.test('writes lower the floor, and what a full scan under way will set', async (t) => {
  const floors = new ScanFloors();
  floors.end(floors.begin('a', false, 0), 100, 0);
  floors.lowered('a', 200);
  t.equal(floors.begin('a', false, 1).from, 100, 'a job after the floor changes nothing');
  floors.lowered('a', null);
  t.equal(floors.begin('a', false, 1).from, 100, 'nor one with no next run');
  floors.lowered('a', 50);
  t.equal(floors.begin('a', false, 1).from, 50);

  const full = floors.begin('b', true, 2);
  floors.lowered('b', 10);
  floors.end(full, 300, 2);
  t.equal(floors.begin('b', false, 3).from, 10, 'a job saved while the scan ran is not left behind');
});

t.test('reset drops every floor, and keeps full scans under way from setting one', async (t) => {
  const floors = new ScanFloors();
  floors.end(floors.begin('a', false, 0), 100, 0);
  const bounded = floors.begin('a', false, 1);
  const full = floors.begin('b', false, 1);
  floors.reset();
  t.equal(floors.begin('a', false, 2).from, undefined);
  floors.end(bounded, 150, 2);
  floors.end(full, 150, 2);
  t.equal(floors.begin('a', false, 3).from, undefined);
  t.equal(floors.begin('b', false, 3).from, undefined);
});

t.test('finding nothing: a full scan drops the floor, a bounded one keeps it', async (t) => {
  const floors = new ScanFloors();
  floors.end(floors.begin('a', false, 0), 100, 0);
  floors.end(floors.begin('a', false, 1), undefined, 1);
  t.equal(floors.begin('a', false, 2).from, 100);
  floors.end(floors.begin('a', true, 3), undefined, 3);
  t.equal(floors.begin('a', false, 4).from, undefined);
});
