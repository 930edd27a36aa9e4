import { expectTypeOf, test } from 'vitest';
import * as z from 'zod';

import type { BrainEpisode } from '../../core/contract/BrainEpisode.js';
import type { BrainSeries } from '../../core/contract/BrainSeries.js';
import { genBrainRepl, type BrainReplOn } from './genBrainRepl.js';

declare const episode: BrainEpisode;
declare const series: BrainSeries;

test('PickOne accepts exactly one of episode or series', () => {
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

test('json-schema: a zod schema types the output, a JSON Schema leaves it unknown, none makes it text; not both', () => {
  const repl = genBrainRepl({ slug: 'bhrain.struct.v1@claude/haiku' });
  expectTypeOf(repl.ask({ say: 'x', schema: { output: z.object({ n: z.number() }) } }))
    .resolves.toHaveProperty('output')
    .toEqualTypeOf<{ n: number }>();
  expectTypeOf(repl.act({ do: 'x', schema: { jsonSchema: { type: 'object' } } }))
    .resolves.toHaveProperty('output')
    .toEqualTypeOf<unknown>();
  expectTypeOf(repl.ask({ say: 'x' }))
    .resolves.toHaveProperty('output')
    .toEqualTypeOf<string>();
  // the CLI passes an optional JSON Schema: still one call, output unknown
  const maybe = undefined as { jsonSchema: object } | undefined;
  expectTypeOf(repl.ask({ say: 'x', schema: maybe }))
    .resolves.toHaveProperty('output')
    .toEqualTypeOf<unknown>();
  // @ts-expect-error: a zod schema and a JSON Schema at once is a compile error
  void repl.ask({ say: 'x', schema: { output: z.string(), jsonSchema: {} } });
});
