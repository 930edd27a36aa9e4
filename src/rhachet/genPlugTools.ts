import type { BrainToolDefinition, JsonSchemaObject } from '../core/contract/BrainMessage.js';
import { BadRequestError } from '../core/contract/errors.js';
import type { RhachetPlugToolDefinition } from './RhachetBrain.js';

/** .what = a tool name both suppliers accept (anthropic and OpenAI-compatible: ^[a-zA-Z0-9_-]{1,64}$) */
const asSafeName = (slug: string): string => slug.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'tool';

/** .what = plugged tools as our tool definitions, and the names the model sees mapped to and from the tools' slugs */
export interface PlugTools {
  definitions: BrainToolDefinition[];
  /** the plugged tool behind a name the model called, or null for a name we did not offer */
  toolOf: (name: string) => RhachetPlugToolDefinition | null;
  /** the slug behind a name: a plugged tool's slug, else the name itself */
  slugOf: (name: string) => string;
  /** the name a slug is offered under: a plugged tool's, else the slug made safe */
  nameOf: (slug: string) => string;
}

/**
 * .what = rhachet's plugs.tools as our native tool definitions, each under a name the suppliers accept, unique among them
 * .why = rhachet slugs may hold dots (stripe.customer.lookup), which the suppliers refuse in a tool name: the model sees
 *        stripe_customer_lookup, and its calls are mapped back to the slug; episodes keep slugs, mapped again when read
 */
export const genPlugTools = (tools: readonly RhachetPlugToolDefinition[] = []): PlugTools => {
  const byName = new Map<string, RhachetPlugToolDefinition>();
  const nameBySlug = new Map<string, string>();
  for (const tool of tools) {
    if (typeof tool?.slug !== 'string' || !tool.slug)
      throw new BadRequestError(
        `plugs.tools[${tools.indexOf(tool)}] has no slug: each plugged tool needs { slug, name, description, schema: { input, output } }`,
      );
    if (nameBySlug.has(tool.slug))
      throw new BadRequestError(`plugs.tools offers the slug '${tool.slug}' twice: each plugged tool needs its own slug`);
    const base = asSafeName(tool.slug);
    let name = base;
    for (let count = 2; byName.has(name); count++) name = `${base.slice(0, 60)}_${count}`;
    byName.set(name, tool);
    nameBySlug.set(tool.slug, name);
  }
  const definitions = [...byName].map(([name, tool]): BrainToolDefinition => {
    const input = tool.schema?.input;
    if (typeof input?.toJSONSchema !== 'function')
      throw new BadRequestError(`plugged tool '${tool.slug}' needs schema.input as a zod schema with toJSONSchema() (zod 4.1 or newer)`);
    const inputSchema = input.toJSONSchema() as JsonSchemaObject;
    if (inputSchema.type !== 'object')
      throw new BadRequestError(
        `plugged tool '${tool.slug}' needs schema.input to describe an object (z.object({ ... })): the suppliers take tool input as an object`,
      );
    return { name, description: tool.description || tool.name || tool.slug, inputSchema };
  });
  return {
    definitions,
    toolOf: (name) => byName.get(name) ?? null,
    slugOf: (name) => byName.get(name)?.slug ?? name,
    nameOf: (slug) => nameBySlug.get(slug) ?? asSafeName(slug),
  };
};
