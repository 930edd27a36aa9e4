import { expectTypeOf, test } from 'vitest';

import type { BrainEpisode } from '../contract/BrainEpisode.js';
import type { BrainSeries } from '../contract/BrainSeries.js';
import { genBrainRepl, type BrainReplOn } from './genBrainRepl.js';

declare const episode: BrainEpisode;
declare const series: BrainSeries;

test('boundary.6: PickOne accepts exactly one of episode or series', () => {
  expectTypeOf({ episode }).toMatchTypeOf<BrainReplOn>();
  expectTypeOf({ series }).toMatchTypeOf<BrainReplOn>();
  expectTypeOf({ episode, series }).not.toMatchTypeOf<BrainReplOn>();

  const repl = genBrainRepl({ slug: 'bhrain.struct.v1@claude/haiku' });
  // @ts-expect-error: both episode and series is a compile error (PickOne)
  void repl.ask({ say: 'x', on: { episode, series } });
  // @ts-expect-error: act takes PickOne too
  void repl.act({ do: 'x', on: { episode, series } });
  void repl.ask({ say: 'x', on: { series } });
  void repl.act({ do: 'x', on: { episode } });
});
