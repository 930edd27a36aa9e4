import { Command } from 'commander';

import { BadRequestError } from '../core/contract/errors.js';
import type { BrainLog } from '../core/contract/BrainContext.js';
import type { AgentSkills } from '../agent/agent-skills/readAgentSkills.js';
import type { AgentFiles } from '../agent/subagents/readAgentFiles.js';
import { EXIT_CODES } from './exitCodes.js';
import { reportReadCommandFailure } from './genRunsCommand.js';

/** .what = the schemaVersion of `bhrain skills -o json` and `bhrain agents -o json`; it changes when a field changes meaning or goes away */
export const AGENT_FILES_OUTPUT_SCHEMA_VERSION = 1;

/** .what = where the listing commands read and write; the process's own unless a test gives others */
export interface AgentFilesCommandContext {
  cwd?: string;
  env?: Record<string, string | undefined>;
  stdout?: { write: (text: string) => unknown };
  stderr?: { write: (text: string) => unknown };
  setExitCode?: (code: number) => void;
}

/** .what = a built-in subagent type as `bhrain agents` lists it */
interface BuiltinSummary {
  name: string;
  description: string;
  tools: 'read-only' | 'parent';
}

/** .what = rows as an aligned table, the last column left as it is */
const formatTable = (rows: string[][]): string => {
  const widths = rows[0].slice(0, -1).map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column < widths.length ? cell.padEnd(widths[column]) : cell))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
};

/** .what = a description as one table cell, cut to keep the line short */
const short = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** .what = what one listing command does: read the files, then render them as text or as the JSON object's fields */
interface Listing<TRead> {
  name: 'skills' | 'agents';
  description: string;
  examples: string;
  read: (
    input: { cwd: string },
    context: { env: Record<string, string | undefined>; log: BrainLog },
  ) => Promise<TRead & { warnings: string[] }>;
  text: (read: TRead, cwd: string) => string;
  json: (read: TRead) => Record<string, unknown>;
}

/** .what = a listing command: `-o text|json`, warnings on stderr (exit 0: a bad file is skipped by a run too) */
const genListingCommand = <TRead>(listing: Listing<TRead>, context: AgentFilesCommandContext): Command => {
  const stdout = context.stdout ?? process.stdout;
  const stderr = context.stderr ?? process.stderr;
  const setExitCode = context.setExitCode ?? ((code: number) => void (process.exitCode = code));
  return new Command(listing.name)
    .description(listing.description)
    .option('-o, --output <format>', `text (a table) or json (one object: {schemaVersion, cwd, ${listing.name}, warnings})`, 'text')
    .addHelpText('after', listing.examples)
    .action(async (options: { output: string }) => {
      const json = options.output === 'json';
      try {
        if (!['text', 'json'].includes(options.output))
          throw new BadRequestError(`unknown --output '${options.output}': choose text or json`);
        const cwd = context.cwd ?? process.cwd();
        const silent = () => {};
        const read = await listing.read(
          { cwd },
          { env: context.env ?? process.env, log: { debug: silent, info: silent, warn: silent, error: silent } },
        );
        for (const warning of read.warnings) stderr.write(`bhrain ${listing.name}: warning: ${warning}\n`);
        stdout.write(
          json
            ? `${JSON.stringify({ schemaVersion: AGENT_FILES_OUTPUT_SCHEMA_VERSION, cwd, ...listing.json(read), warnings: read.warnings })}\n`
            : `${listing.text(read, cwd)}\n`,
        );
        setExitCode(EXIT_CODES.complete);
      } catch (error) {
        reportReadCommandFailure({ command: listing.name, error, json }, { stdout, stderr, setExitCode });
      }
    });
};

/**
 * .what = `bhrain skills`: the Agent Skills (SKILL.md) a run here would offer, and from where; the ones a nearer skill of
 *         the same name hides, marked; bad files as warnings
 * .why = with four places to look and a name that may be in several, a user must see which file a run will use
 */
export const genAgentSkillsCommand = (context: AgentFilesCommandContext = {}): Command =>
  genListingCommand(
    {
      name: 'skills',
      description: 'list the Agent Skills (SKILL.md) a run here would offer, and where each comes from',
      examples: '\nExamples:\n  $ bhrain skills\n  $ bhrain skills -o json',
      // through the run's own module: a run then loads no file more for the finding these commands share with it
      read: async (input, readContext): Promise<AgentSkills> => (await import('./runSkill.js')).listAgentSkills(input, readContext),
      text: (read, cwd) =>
        read.found.length
          ? formatTable([
              ['NAME', 'SCOPE', 'SKILL.md', 'DESCRIPTION'],
              ...read.found.map((skill) => [
                skill.name,
                skill.scope,
                `${skill.path}${skill.shadowedBy ? ' (hidden by a nearer one)' : ''}`,
                short(skill.description),
              ]),
            ])
          : `no Agent Skills found for ${cwd}: put one in .bhrain/skills/<name>/SKILL.md (or .claude/skills, .agents/skills, or your config dir's skills/)`,
      json: (read) => ({ skills: read.found }),
    },
    context,
  );

/**
 * .what = `bhrain agents`: the subagent types `act` offers here: explore, plan and general-purpose, and those of the agent
 *         files (.bhrain/agents/*.md, .claude/agents/*.md, your config dir's agents/), each with its tools and model
 * .why = a user sees what the model can delegate to, and which file a type comes from
 */
export const genAgentsCommand = (context: AgentFilesCommandContext = {}): Command =>
  genListingCommand(
    {
      name: 'agents',
      description: 'list the subagent types act offers here: the built-in ones, and those of agent files (.bhrain/agents, .claude/agents)',
      examples: '\nExamples:\n  $ bhrain agents\n  $ bhrain agents -o json',
      read: async (input, readContext): Promise<AgentFiles & { builtins: BuiltinSummary[] }> =>
        (await import('./runSkill.js')).listAgentTypes(input, readContext),
      text: (read) =>
        formatTable([
          ['NAME', 'SOURCE', 'TOOLS', 'MODEL', 'DESCRIPTION'],
          ...read.builtins.map((type) => [
            type.name,
            'built-in',
            type.tools === 'parent' ? "parent's" : 'read-only',
            'inherit',
            short(type.description),
          ]),
          ...read.found.map((type) => [
            type.definition.name,
            `${type.path}${type.shadowedBy ? ' (hidden by a nearer one)' : ''}`,
            type.tools ? type.tools.join(',') || '(none)' : "parent's",
            type.model ?? 'inherit',
            short(type.definition.description),
          ]),
        ]),
      json: (read) => ({
        agents: [
          ...read.builtins.map((type) => ({
            name: type.name,
            description: type.description,
            source: 'built-in',
            path: null,
            scope: null,
            tools: type.tools === 'parent' ? null : ['read', 'glob', 'grep', 'websearch'],
            model: null,
            shadowedBy: null,
          })),
          ...read.found.map((type) => ({
            name: type.definition.name,
            description: type.definition.description,
            source: 'file',
            path: type.path,
            scope: type.scope,
            tools: type.tools,
            model: type.model,
            shadowedBy: type.shadowedBy,
          })),
        ],
      }),
    },
    context,
  );
