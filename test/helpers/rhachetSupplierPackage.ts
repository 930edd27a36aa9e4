// a `rhachet-brains-<name>` package, written by a test from rhachet's documented atom contract (BrainAtom: repo, slug,
// spec, ask({ on, plugs, role, prompt, schema }) → { output, calls, metrics, episode, series: null }): its atom talks to
// the stand-in's OpenAI-compatible endpoint over real HTTP (STANDIN_BASE_URL), with the key rhachet binds in context
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** the atom's code, CommonJS as rhachet's require.resolve finds it; its episodes keep turns as JSON envelopes of its own */
const ATOM_JS = `'use strict';
const { createHash } = require('node:crypto');
const sha = (text) => createHash('sha256').update(text).digest('hex');
const REPO = process.env.STANDIN_SUPPLIER_REPO || 'standin';
const price = (usd) => 'USD ' + usd.toFixed(12).replace(/0+$/, '').replace(/\\.$/, '');
const failOf = (name, message, status) => Object.assign(new Error(message), { name }, status ? { status } : {});
const turnsOf = (exchange) => {
  const given = JSON.parse(exchange.input);
  const said = JSON.parse(exchange.output);
  const asked = given.results
    ? given.results.map((result) => ({ role: 'tool', tool_call_id: result.exid, content: result.content }))
    : [{ role: 'user', content: given.prompt }];
  const answer = { role: 'assistant', content: said.text || null };
  if (said.calls.length)
    answer.tool_calls = said.calls.map((call) => ({ id: call.exid, type: 'function', function: { name: call.slug, arguments: JSON.stringify(call.input) } }));
  return [...asked, answer];
};
const contentOf = (execution) =>
  execution.signal === 'success'
    ? JSON.stringify(execution.output)
    : JSON.stringify({ error: { name: execution.output.error.name, message: execution.output.error.message }, signal: execution.signal });
const genAtom = (model, tooluse) => ({
  repo: REPO,
  slug: REPO + '/' + model,
  description: 'the stand-in model ' + model + ', as a rhachet supplier would give it',
  spec: {
    cost: { time: { speed: { tokens: 100, per: { seconds: 1 } }, latency: { milliseconds: 10 } },
      cash: { per: 'token', input: 'USD 0.000003', output: 'USD 0.000015', cache: { get: 'USD 0.0000003', set: 'USD 0.00000375' } } },
    gain: { size: { context: { tokens: 200000 } }, grades: {}, cutoff: '2025-01-01', domain: 'ALL', skills: { tooluse } },
  },
  ask: async (input, context) => {
    const supplies = context && context['brain.supplier.' + REPO];
    const keys = supplies && supplies.creds ? await supplies.creds() : {};
    const apiKey = keys[REPO.toUpperCase() + '_API_KEY'];
    if (!apiKey) throw failOf('BadRequestError', REPO.toUpperCase() + '_API_KEY required — provide via context');
    const system = (await Promise.all((input.role.briefs || []).map(async (brief) => (await brief.get())?.content))).filter(Boolean).join('\\n\\n');
    const prior = input.on ? input.on.episode.exchanges.flatMap(turnsOf) : [];
    const results = Array.isArray(input.prompt) ? input.prompt.map((execution) => ({ exid: execution.exid, content: contentOf(execution) })) : null;
    const current = results ? results.map((result) => ({ role: 'tool', tool_call_id: result.exid, content: result.content })) : [{ role: 'user', content: input.prompt }];
    const tools = (input.plugs && input.plugs.tools) || [];
    const body = {
      model,
      messages: [...(system ? [{ role: 'system', content: system }] : []), ...prior, ...current],
      ...(tools.length ? { tools: tools.map((tool) => ({ type: 'function', function: { name: tool.slug, description: tool.description, parameters: tool.schema.input.toJSONSchema() } })) } : {}),
    };
    const response = await fetch(process.env.STANDIN_BASE_URL + '/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + apiKey },
      body: JSON.stringify(body),
    });
    const json = await response.json();
    if (!response.ok) throw failOf('APIError', (json.error && json.error.message) || 'HTTP ' + response.status, response.status);
    const message = json.choices[0].message;
    const calls = (message.tool_calls || []).map((call) => ({ exid: call.id, slug: call.function.name, input: JSON.parse(call.function.arguments || '{}') }));
    const text = message.content || '';
    const exchangeInput = JSON.stringify(results ? { results } : { prompt: input.prompt });
    const exchangeOutput = JSON.stringify({ text, calls });
    const exchanges = [...(input.on ? input.on.episode.exchanges : []), { hash: sha(exchangeInput + '\\n' + exchangeOutput), input: exchangeInput, output: exchangeOutput, exid: json.id || null }];
    const tokens = { input: json.usage.prompt_tokens, output: json.usage.completion_tokens, cache: { get: 0, set: 0 } };
    const deets = { input: tokens.input * 0.000003, output: tokens.output * 0.000015 };
    const parsed = input.schema.output.safeParse(text);
    return {
      output: calls.length ? null : parsed.success ? parsed.data : text,
      calls: calls.length ? { tools: calls } : null,
      metrics: {
        size: { tokens, chars: { input: exchangeInput.length, output: exchangeOutput.length, cache: { get: 0, set: 0 } } },
        cost: { time: { milliseconds: 1 }, cash: { total: price(deets.input + deets.output), deets: { input: price(deets.input), output: price(deets.output), cache: { get: 'USD 0', set: 'USD 0' } } } },
      },
      episode: { hash: sha(exchanges.map((exchange) => exchange.hash).join('\\n')), exid: null, exchanges },
      series: null,
    };
  },
});
exports.getBrainAtomsByStandin = () => [genAtom('gpt-standin-1', true), genAtom('gpt-standin-text', false)];
exports.getBrainReplsByStandin = () => [];
`;

/**
 * .what = writes node_modules/rhachet-brains-<name> into a consumer repository (package.json with main, and the atom's
 *         code), and returns the package's directory
 */
export const writeRhachetSupplierPackage = async (input: { repoDir: string; name: string }): Promise<string> => {
  const dir = join(input.repoDir, 'node_modules', `rhachet-brains-${input.name}`);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: `rhachet-brains-${input.name}`, version: '0.0.1', main: 'index.js' }));
  await writeFile(join(dir, 'index.js'), ATOM_JS);
  return dir;
};
