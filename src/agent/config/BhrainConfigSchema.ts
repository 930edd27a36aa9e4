import * as z from 'zod';

import { BadRequestError } from '../../core/contract/errors.js';
import type { BhrainConfig } from './BhrainConfig.js';
import { BHRAIN_CONFIG_BOUNDS, MAX_SUBAGENT_MAX_DEPTH } from '../constants.js';
import { BASH_SANDBOX_MODES } from '../../sandbox/BashSandbox.js';
import { checkDomainPattern } from '../../sandbox/network/allowedDomains.js';
import { checkEnvMask } from '../../sandbox/network/genMaskedCredentials.js';
import { checkPassedEnvName } from '../../sandbox/commandEnv.js';
import { BHRAIN_HOOK_EVENT_NAMES } from '../hooks/BhrainHook.js';

const fn = (what: string) => z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', `${what} must be a function`);
const schemaToolBox = z.object({
  name: z.string().min(1, 'a toolbox needs a name'),
  definitions: z.array(
    z.object({
      name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'a tool name is 1-64 letters, digits, _ or -'),
      description: z.string(),
      inputSchema: z.object({ type: z.literal('object') }).loose(),
    }),
  ),
  execute: fn('toolbox.execute'),
});
const schemaAtom = z.union([
  z.string().min(1),
  z.object({ slug: z.string(), generate: fn('atom.generate'), spec: z.object({ contextWindowTokens: z.number() }).loose() }).loose(),
]);
const schemaSubagents = z.union([
  z.boolean({ error: 'subagents must be true, false or { maxDepth?, types? }' }),
  z
    .object({
      maxDepth: z
        .number({ error: 'subagents.maxDepth must be a number' })
        .int('subagents.maxDepth must be a whole number')
        .min(1, 'subagents.maxDepth must be at least 1 (to turn subagents off, set subagents: false)')
        .max(MAX_SUBAGENT_MAX_DEPTH, `subagents.maxDepth must be at most ${MAX_SUBAGENT_MAX_DEPTH}`)
        .optional(),
      types: z
        .array(
          z
            .object({
              name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'a subagent type name is 1-64 letters, digits, _ or -'),
              description: z.string().min(1, 'a subagent type needs a description: the model reads it to choose a type'),
              systemPrompt: z.string().min(1, 'a subagent type needs a systemPrompt'),
              toolBoxes: z.array(schemaToolBox).optional(),
              toolNames: z.array(z.string().min(1, 'a tool name is not empty')).optional(),
              inheritTools: z.boolean().optional(),
              atom: schemaAtom.optional(),
            })
            .strict(),
        )
        .optional(),
    })
    .strict(),
]);
const schemaHook = z
  .object({
    name: z.string().min(1, 'a hook needs a name (shown in its events)'),
    matcher: z.string().optional(),
    timeoutMs: z.number().int('a hook timeoutMs must be a whole number').min(1, 'a hook timeoutMs must be at least 1').optional(),
    run: fn('hook.run'),
  })
  .strict();
const schemaHooks = z.strictObject(Object.fromEntries(BHRAIN_HOOK_EVENT_NAMES.map((event) => [event, z.array(schemaHook).optional()])), {
  error: (issue) =>
    issue.code === 'unrecognized_keys'
      ? `unknown hook event ${issue.keys.join(', ')}: hooks are keyed by event: ${BHRAIN_HOOK_EVENT_NAMES.join(', ')}`
      : undefined,
});
const schemaConfig = z
  .object({
    uuid: z.string().optional(),
    atom: schemaAtom,
    toolBoxes: z.array(schemaToolBox).optional(),
    memoryManager: z
      .object({ name: z.string(), shouldUpdate: fn('memoryManager.shouldUpdate'), getUpdate: fn('memoryManager.getUpdate') })
      .loose()
      .optional(),
    permissionGuard: z
      .object({ name: z.string(), check: fn('permissionGuard.check') })
      .loose()
      .optional(),
    maxIterations: z
      .number()
      .int('maxIterations must be a whole number')
      .min(BHRAIN_CONFIG_BOUNDS.maxIterations.min)
      .max(BHRAIN_CONFIG_BOUNDS.maxIterations.max)
      .optional(),
    systemPrompt: z.string().optional(),
    baseSystemPrompt: z.string().min(1, "baseSystemPrompt replaces bhrain's own prompt: give text, or leave it out").optional(),
    instructions: z
      .string({
        error: 'instructions must be a string: the text of the project instructions, e.g. (await loadProjectInstructions({ cwd })).text',
      })
      .optional(),
    gitStatus: z.boolean({ error: 'gitStatus must be true or false' }).optional(),
    sandbox: z
      .object({
        mode: z.enum(BASH_SANDBOX_MODES, { error: `sandbox.mode must be one of ${BASH_SANDBOX_MODES.join(', ')}` }).optional(),
        allowNetwork: z.boolean().optional(),
        allowedDomains: z
          .array(
            z.string().superRefine((pattern, ctx) => {
              const wrong = checkDomainPattern(pattern);
              if (wrong) ctx.addIssue({ code: 'custom', message: `sandbox.allowedDomains: ${wrong}` });
            }),
          )
          .optional(),
        domainProxy: z
          .object({ allowedDomains: z.array(z.string()), serve: fn('sandbox.domainProxy.serve'), audit: fn('sandbox.domainProxy.audit') })
          .loose()
          .optional(),
        denyRead: z.array(z.string({ error: 'sandbox.denyRead holds paths: absolute, or starting with ~/' })).optional(),
        allowRead: z.array(z.string({ error: 'sandbox.allowRead holds paths: absolute, or starting with ~/' })).optional(),
        env: z
          .object({
            pass: z
              .array(
                z.string().superRefine((name, ctx) => {
                  const wrong = checkPassedEnvName(name);
                  if (wrong) ctx.addIssue({ code: 'custom', message: `sandbox.env.pass: ${wrong}` });
                }),
              )
              .optional(),
            mask: z
              .record(z.string(), z.array(z.string()))
              .superRefine((mask, ctx) => {
                const wrong = checkEnvMask(mask);
                if (wrong) ctx.addIssue({ code: 'custom', message: `sandbox.env.mask: ${wrong}` });
              })
              .optional(),
          })
          .strict()
          .optional(),
        allowUnixSockets: z
          .array(z.string({ error: "sandbox.allowUnixSockets holds unix sockets' paths: absolute, or starting with ~/" }))
          .optional(),
      })
      .strict()
      .optional(),
    limits: z
      .object({
        contextTokens: z.number().int().min(1_000).optional(),
        maxToolOutputChars: z.number().int().min(1_000).optional(),
        guardTimeoutMs: z.number().int().min(1).optional(),
        maxConcurrentToolCalls: z.number().int().min(1).optional(),
        maxBudgetUsd: z
          .number({ error: 'limits.maxBudgetUsd must be a number of US dollars' })
          .gt(
            BHRAIN_CONFIG_BOUNDS.maxBudgetUsd.above,
            `limits.maxBudgetUsd must be more than ${BHRAIN_CONFIG_BOUNDS.maxBudgetUsd.above} US dollars`,
          )
          .finite()
          .optional(),
        maxTokens: z
          .number({ error: 'limits.maxTokens must be a number of tokens' })
          .int('limits.maxTokens must be a whole number of tokens')
          .min(BHRAIN_CONFIG_BOUNDS.maxTokens.min, `limits.maxTokens must be at least ${BHRAIN_CONFIG_BOUNDS.maxTokens.min}`)
          .optional(),
        maxWallTimeMs: z
          .number({ error: 'limits.maxWallTimeMs must be a number of milliseconds' })
          .positive('limits.maxWallTimeMs must be more than 0 ms')
          .finite()
          .optional(),
      })
      .strict()
      .optional(),
    subagents: schemaSubagents.optional(),
    skills: z
      .array(
        z
          .object({
            name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a skill name is 1-64 letters, digits, _ or -'),
            description: z.string().min(1, 'a skill needs a description: the model reads it to choose the skill'),
            path: z.string().min(1, "a skill's path is its SKILL.md"),
          })
          .strict(),
      )
      .optional(),
    hooks: schemaHooks.optional(),
  })
  .strict();

/**
 * .what = checks a config's shape before any loop starts, naming each bad field
 * .why = a library caller's mistake (a string for a number, an unknown key) fails at configuration time, never mid-run
 */
export const validateBhrainConfig = (config: BhrainConfig): void => {
  const parsed = schemaConfig.safeParse(config);
  if (!parsed.success) throw new BadRequestError(`invalid bhrain.struct.v1 config:\n${z.prettifyError(parsed.error)}`);
};
