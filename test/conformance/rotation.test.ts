// The probe families a run sends in slices: runs one after another cover every probe, the state file carries
// where the last run stopped (per base URL), and without one the slice follows the seed.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rotation } from '../../scripts/conformance/rotation.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'conformance-rotation-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const items = Array.from({ length: 10 }, (_, i) => `op${i}`);

async function oneRun(file: string, baseUrl = 'http://a.example/api/v1') {
  const rotation = await Rotation.open(baseUrl, file, 1);
  const slice = rotation.pick('auth_required', items, (item) => item, 3);
  for (const item of slice.picked) slice.sent(item);
  const coverage = rotation.coverage();
  await rotation.save();
  return { picked: slice.picked, left: slice.left, coverage };
}

describe('slices across runs', () => {
  it('sends every probe within four runs of three, none twice before all were sent', async () => {
    const file = join(dir, 'state.json');
    const runs = [];
    for (let run = 0; run < 4; run++) runs.push(await oneRun(file));
    const firstThree = runs.slice(0, 3).flatMap((run) => run.picked);
    expect(new Set(firstThree).size).toBe(9);
    expect(new Set(runs.flatMap((run) => run.picked))).toEqual(new Set(items));
    expect(runs[0]?.left).toHaveLength(7);
    expect(runs[0]?.coverage).toEqual(['auth_required: 3 of 10 this run; 3 of 10 over 1 run(s) recorded']);
    expect(runs[2]?.coverage).toEqual(['auth_required: 3 of 10 this run; 9 of 10 over 3 run(s) recorded']);
  });

  it('keeps each base URL apart in the state file', async () => {
    const file = join(dir, 'two.json');
    await oneRun(file, 'http://a.example/api/v1');
    const other = await oneRun(file, 'http://b.example/api/v1');
    expect(other.coverage).toEqual(['auth_required: 3 of 10 this run; 3 of 10 over 1 run(s) recorded']);
    const state = JSON.parse(await readFile(file, 'utf8')) as Record<string, { runs: number }>;
    expect(Object.keys(state)).toEqual(['http://a.example/api/v1', 'http://b.example/api/v1']);
  });

  it('sends everything when the share allows it, and follows the seed without a state file', async () => {
    const whole = await Rotation.open('http://a.example', undefined, 7);
    expect(whole.pick('odd_ids', items, (item) => item).picked).toEqual(items);
    const [a, b] = await Promise.all([Rotation.open('x', undefined, 7), Rotation.open('x', undefined, 7)]);
    expect(a?.pick('odd_ids', items, (i) => i, 2).picked).toEqual(b?.pick('odd_ids', items, (i) => i, 2).picked);
    expect(a?.coverage()).toEqual(['odd_ids: 0 of 10 this run']);
  });
});
