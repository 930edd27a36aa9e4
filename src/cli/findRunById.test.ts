import { describe, expect, it } from 'vitest';

import { BadRequestError } from '../core/contract/errors.js';
import { findRunById } from './findRunById.js';

/** a run as meta.json has it, started on 2026-11-28 at the given minute, with the given random end */
const runAt = (minute: number, end: string, task: string | null = `task ${minute}`) => ({
  id: `2026-11-28T03-${String(minute).padStart(2, '0')}-41-123Z-${end}`,
  task,
  cwd: '/work/repo',
});
const find = (runs: ReturnType<typeof runAt>[], arg: string, label?: string) =>
  findRunById({ runs, arg, hint: 'see `bhrain runs`', label });

describe('findRunById', () => {
  const runs = [runAt(58, '3c3451'), runAt(57, 'a1b2c3'), runAt(56, 'ffee00', null)];

  it('records: a run is found by its whole id, or by a start or an end of it that no other run shares', () => {
    expect(find(runs, runs[1].id)).toBe(runs[1]);
    expect(find(runs, '3c3451')).toBe(runs[0]);
    expect(find(runs, '451')).toBe(runs[0]);
    expect(find(runs, 'Z-a1b2c3')).toBe(runs[1]);
    expect(find(runs, '2026-11-28T03-56')).toBe(runs[2]);
  });

  it('records: a start several runs share is a BadRequestError listing each (id, task, directory), the label first', () => {
    expect(() => find(runs, '2026-11-28T03-5', '--resume 2026-11-28T03-5')).toThrow(
      new BadRequestError(
        [
          "--resume 2026-11-28T03-5: ambiguous: 3 runs match '2026-11-28T03-5'; give more of the id of the one you mean:",
          `  ${runs[0].id}  task 58  (in /work/repo)`,
          `  ${runs[1].id}  task 57  (in /work/repo)`,
          `  ${runs[2].id}  -  (in /work/repo)`,
        ].join('\n'),
      ),
    );
    const many = Array.from({ length: 12 }, (_, minute) => runAt(minute, `00000${minute % 10}`));
    const listed = (() => {
      try {
        return find(many, '2026');
      } catch (error) {
        return (error as Error).message;
      }
    })() as string;
    expect(listed.split('\n')).toHaveLength(12);
    expect(listed.split('\n').at(-1)).toBe('  … and 2 more');
  });

  it('records: no match names the nearest ids (a typo in the end, or in the start), then the hint; a blank argument asks for an id', () => {
    expect(() => find(runs, '3c3415')).toThrow(`no recorded run matches '3c3415' (did you mean ${runs[0].id}?); see \`bhrain runs\``);
    expect(() => find(runs, '2026-11-28T03-59')).toThrow(`(did you mean ${runs[0].id}?)`);
    // the nearest start is every run's: each is named, newest first
    expect(() => find(runs, '2026-11-29T03')).toThrow(`(did you mean ${runs[0].id} or ${runs[1].id} or ${runs[2].id}?)`);
    expect(() => find(runs, 'zz')).toThrow("no recorded run matches 'zz'; see `bhrain runs`");
    expect(() => find(runs, ' ', '--resume  ')).toThrow('--resume  : give a run id');
  });
});
