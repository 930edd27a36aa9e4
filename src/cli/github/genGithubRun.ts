import { randomBytes } from 'node:crypto';
import { appendFile } from 'node:fs/promises';

import type { BrainTokens } from '../../core/contract/BrainOutput.js';
import type { SecretRedactor } from '../../core/secrets/genSecretRedactor.js';
import type { AuditList, RunAudit } from '../audit/genRunAudit.js';

/**
 * .what = a workflow command's data, escaped as GitHub documents (`%`, CR, LF)
 * .why = text in a command line (a denial's reason, an error message) must not end the line and start a command of its own
 */
export const escapeCommandData = (text: string): string => text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

/** .what = a workflow command's property value, escaped as GitHub documents: the data's escapes, and `:` and `,` */
export const escapeCommandProperty = (text: string): string => escapeCommandData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');

/** .what = a fence of backticks longer than any run of backticks inside the text: the text cannot close its block */
export const fenceFor = (text: string): string => '`'.repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((run) => run[0].length + 1)));

/** .what = text in a fenced block of a Markdown file: model text shows as written and never breaks out of its block */
const fenced = (text: string): string => {
  const fence = fenceFor(text);
  return `${fence}text\n${text.endsWith('\n') ? text : `${text}\n`}${fence}\n`;
};

/** .what = how a run ended, as the GitHub summary and annotations tell it (every text redacted by the caller) */
export interface GithubRunOutcome {
  exitCode: number;
  termination: string;
  /** the answer (null when the run failed before it had one) */
  answer: string | null;
  /** the error that ended the run, when one did */
  error: string | null;
  metrics: { iterations: number; tokens: BrainTokens; costUsd: number | null; elapsedMs: number } | null;
  denials: Array<{ tool: string; reason: string; by: string }>;
  /** the end-of-run audit: the summary's files, commands, tools, subagents and hosts (null when the run did not finish) */
  audit: RunAudit | null;
}

/** .what = a bounded list's lines, fenced, and the count left out */
const fencedList = (list: AuditList<string>, redact: SecretRedactor): string =>
  list.items.length ? `${fenced(redact(list.items.join('\n')))}${list.omitted ? `\n_and ${list.omitted} more_\n` : ''}` : '_none_\n';

/** .what = what the run hid from `git status` and `git diff`, a line each: the index bits, then the files that hide */
const formatHidden = (audit: RunAudit): { lines: string[]; omitted: number; total: number } => {
  const { index, files } = audit.hidden;
  const lines = [
    ...index.items.map(
      (entry) =>
        `${entry.bits.join(' and ')}: ${entry.path} (${entry.setBy === 'run' ? 'set during the run' : 'set before the run; the run changed the file'})`,
    ),
    ...files.items.map((file) => `${file.change}: ${file.path}`),
  ];
  const omitted = index.omitted + files.omitted;
  return { lines, omitted, total: lines.length + omitted };
};

/** .what = the audit's sections of the summary: the files changed, the commands run, MCP tools, subagents, hosts */
const formatAuditSections = (audit: RunAudit | null, redact: SecretRedactor): string[] => {
  if (!audit) return ['### Audit\n\n_none: the run did not finish_\n'];
  const { files } = audit;
  const total = (list: AuditList<unknown>) => list.items.length + list.omitted;
  const cutNote = files.complete
    ? ''
    : `_The walk of the working directory was cut by its budget (${files.cut.join(', ')}): changes past the cut are not listed._\n\n`;
  const sections = [
    `### Files changed in the working directory\n\n${cutNote}` +
      `Created (${total(files.created)}):\n\n${fencedList(files.created, redact)}\n` +
      `Changed (${total(files.changed)}):\n\n${fencedList(files.changed, redact)}\n` +
      `Deleted (${total(files.deleted)}):\n\n${fencedList(files.deleted, redact)}`,
  ];
  const hidden = formatHidden(audit);
  sections.push(
    `### Hidden from review (${hidden.total})\n\n` +
      (audit.hidden.unread ? `_The index could not be compared: ${redact(audit.hidden.unread)}._\n\n` : '') +
      fencedList({ items: hidden.lines, omitted: hidden.omitted }, redact),
  );
  const subagentTypes = new Map(audit.subagents.items.map((agent) => [agent.uuid, agent.type]));
  const commands = audit.commands.items.map(
    (run) =>
      `$ ${run.command}  # exit ${run.exitCode ?? 'killed'}` +
      (run.durationMs === null ? '' : `, ${(run.durationMs / 1000).toFixed(1)} s`) +
      (run.subagent ? `, in the ${subagentTypes.get(run.subagent) ?? ''} subagent` : ''),
  );
  sections.push(
    `### Commands run (${total(audit.commands)})\n\n${fencedList({ items: commands, omitted: audit.commands.omitted }, redact)}`,
  );
  const tools = audit.tools.map((tool) => `${tool.tool}: ${tool.calls} call(s), ${tool.failed} failed, ${tool.denied} denied`);
  sections.push(`### MCP tools called (${tools.length})\n\n${fencedList({ items: tools, omitted: 0 }, redact)}`);
  const subagents = audit.subagents.items.map((agent) => `${agent.type}: ${agent.description} (${agent.status ?? 'not ended'})`);
  sections.push(
    `### Subagents (${total(audit.subagents)})\n\n${fencedList({ items: subagents, omitted: audit.subagents.omitted }, redact)}`,
  );
  // only when bash touched one: a section that says "none" on every run would teach the reader to skip it
  if (total(audit.protected)) {
    const changes = audit.protected.items.map((change) =>
      change.action === 'repository'
        ? `made a git repository at ${change.path}${change.runs?.length ? `; runs code: ${change.runs.join(', ')}` : ''}`
        : `${change.action === 'removed' ? 'made' : 'changed'} ${change.path} (${change.trustedBy}): ${change.action === 'removed' ? 'removed' : 'put back'}${change.quarantine ? `, its version kept in ${change.quarantine}` : ''}`,
    );
    sections.push(
      `### Protected paths bash touched (${total(audit.protected)})\n\n${fencedList({ items: changes, omitted: audit.protected.omitted }, redact)}`,
    );
  }
  if (audit.network) {
    const hosts = [
      ...audit.network.hosts.map((host) => `reached ${host.host} (${host.requests})`),
      ...audit.network.denied.map((host) => `refused ${host.host} (${host.requests})`),
    ];
    sections.push(`### Hosts (${hosts.length})\n\n${fencedList({ items: hosts, omitted: 0 }, redact)}`);
  }
  return sections;
};

/** .what = the job summary's Markdown: the answer, how the run ended, what it cost, its denials, files and commands */
const formatSummary = (skill: string, outcome: GithubRunOutcome, redact: SecretRedactor): string => {
  const { metrics } = outcome;
  const tokens = metrics?.tokens;
  const lines = [
    `## bhrain ${skill}`,
    '',
    `- **Termination:** ${outcome.termination} (exit ${outcome.exitCode})`,
    `- **Cost:** ${metrics?.costUsd === null || !metrics ? 'unknown' : `$${metrics.costUsd.toFixed(4)}`}`,
    `- **Tokens:** ${tokens ? `${tokens.input} input, ${tokens.output} output, ${tokens.cache.get} cache read, ${tokens.cache.set} cache write` : 'none'}`,
    ...(metrics ? [`- **Iterations:** ${metrics.iterations} in ${(metrics.elapsedMs / 1000).toFixed(1)} s`] : []),
    '',
  ];
  const sections: string[] = [lines.join('\n')];
  if (outcome.error) sections.push(`### Error\n\n${fenced(redact(outcome.error))}`);
  sections.push(`### Answer\n\n${outcome.answer ? fenced(redact(outcome.answer)) : '_no answer_\n'}`);
  const denials = outcome.denials.map((denial) => `${denial.tool} (by ${denial.by}): ${denial.reason}`).join('\n');
  sections.push(`### Denied tool calls (${outcome.denials.length})\n\n${denials ? fenced(redact(denials)) : '_none_\n'}`);
  sections.push(...formatAuditSections(outcome.audit, redact));
  return `${sections.join('\n')}\n`;
};

/** .what = the annotations a reviewer should see: a warning per denial and for a budget stop, an error for a failure */
const formatAnnotations = (skill: string, outcome: GithubRunOutcome, redact: SecretRedactor): string[] => {
  const annotation = (level: 'warning' | 'error', title: string, message: string) =>
    `::${level} title=${escapeCommandProperty(redact(title))}::${escapeCommandData(redact(message))}`;
  const lines = outcome.denials.map((denial) =>
    annotation('warning', `bhrain ${skill}: ${denial.tool} denied`, `${denial.tool} (by ${denial.by}): ${denial.reason}`),
  );
  const hidden = outcome.audit ? formatHidden(outcome.audit) : null;
  if (hidden?.total)
    lines.push(
      annotation(
        'warning',
        `bhrain ${skill}: ${hidden.total} change(s) hidden from review`,
        `git status and git diff do not show: ${hidden.lines.join('; ')}${hidden.omitted ? `; and ${hidden.omitted} more` : ''}`,
      ),
    );
  if (outcome.termination === 'budget')
    lines.push(annotation('warning', `bhrain ${skill}: budget reached`, `the run stopped on a budget (exit ${outcome.exitCode})`));
  else if (outcome.exitCode !== 0)
    lines.push(
      annotation(
        'error',
        `bhrain ${skill} failed (exit ${outcome.exitCode})`,
        `${outcome.termination} (exit ${outcome.exitCode})${outcome.error ? `: ${outcome.error}` : ''}`,
      ),
    );
  return lines;
};

/**
 * .what = GitHub Actions' conventions for one CLI run: its stderr in a collapsible group with workflow commands stopped,
 *         then annotations, and a job summary appended to $GITHUB_STEP_SUMMARY
 * .why = a reviewer sees the denials, a budget stop and a failure on the run's page, and what the run did in its summary.
 *        Everything the run prints between start and end (the progress log, which echoes the model's tool calls and
 *        tools' output, and the answer on stdout) may hold model-controlled lines such as `::add-mask::x`: the runner
 *        reads none of them as a command, since `::stop-commands::<token>` is in force until this run's own random
 *        token resumes them; the lines written after it are escaped
 */
export const startGithubRun = (input: {
  skill: string;
  stderr: NodeJS.WritableStream;
  redact: SecretRedactor;
  /** $GITHUB_STEP_SUMMARY: null when the runner gives none */
  summaryPath: string | null;
  /** the exit code of a run that completed but whose summary could not be written (the CLI's 5: given, so that this
   *  chunk shares no module with the CLI's entry and the bundle's start-up stays as it was) */
  persistFailureExitCode: number;
}) => {
  const { skill, stderr, redact } = input;
  const token = randomBytes(16).toString('hex');
  stderr.write(`::group::bhrain ${skill}\n::stop-commands::${token}\n`);
  let ended = false;
  /** .what = commands resumed, the group closed, the annotations printed and the summary appended; the exit code, 5 when the summary could not be written */
  const end = async (outcome: GithubRunOutcome): Promise<number> => {
    if (ended) return outcome.exitCode;
    ended = true;
    stderr.write(`::${token}::\n::endgroup::\n`);
    for (const line of formatAnnotations(skill, outcome, redact)) stderr.write(`${line}\n`);
    if (!input.summaryPath) return outcome.exitCode;
    const failure = await appendFile(input.summaryPath, formatSummary(skill, outcome, redact)).then(
      () => null,
      (error: Error) => error.message,
    );
    if (failure === null) return outcome.exitCode;
    stderr.write(`::error title=bhrain ${skill}::${escapeCommandData(redact(`the job summary could not be written: ${failure}`))}\n`);
    return outcome.exitCode === 0 ? input.persistFailureExitCode : outcome.exitCode;
  };
  return { end };
};

export type GithubRun = ReturnType<typeof startGithubRun>;
