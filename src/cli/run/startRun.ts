import type { BhrainContext } from '../../agent/BhrainContext.js';
import { genGitCheckpointer, type GitCheckpointer } from '../../agent/checkpoint/genGitCheckpointer.js';
import { findUnmatchedMcpDenyRules } from '../../agent/permission/findUnmatchedMcpDenyRules.js';
import { getBhrainHome } from '../../core/continuation/genBrainRefStore.js';
import { genTtyPrompter } from '../genTtyPrompter.js';
import { startMcpServers } from '../mcp/startMcpServers.js';
import { onStopSignals } from '../onStopSignals.js';
import { nodeHttpFetch } from '../../providers/transport/nodeHttpFetch.js';
import { openRunRecord, RUN_RETENTION, type RunRecord } from '../runRecord.js';
import type { RunIo } from './genRunIo.js';
import { genRecordSink } from './genRecordSink.js';
import { genStreamJsonSink } from './genStreamJsonSink.js';
import type { PreparedRun } from './prepareRun.js';

/**
 * .what = starts a prepared run: its record opened, Ctrl-C and SIGTERM handled, its MCP servers started, the stream-json
 *         output and the host's sink added, and the context the session runs in (the prompter on a terminal, every
 *         event and streamed text to the run's sinks)
 */
export const startRun = async (
  io: RunIo,
  run: PreparedRun,
): Promise<{ context: BhrainContext; record: RunRecord; checkpointer: GitCheckpointer | null }> => {
  const { skill, options, redact, log, host, sinks } = io;
  const record = await openRunRecord(
    {
      home: getBhrainHome(),
      recordDir: options.record ? options.recordDir : null,
      skill,
      atom: run.atom.slug,
      cwd: run.cwd,
      prompt: run.prompt,
    },
    { warn: io.warn },
  );
  sinks.add(genRecordSink(record));
  // the files an act run may change, recorded before its first change and after each turn that changed them: nothing
  // runs until a turn calls a tool that may write, so a run that changes nothing pays nothing. A run with no record
  // (--no-record) could never be rewound: it takes none
  const checkpointer =
    run.checkpoints && record.dir !== null
      ? genGitCheckpointer(
          {
            cwd: run.cwd,
            home: getBhrainHome(),
            runId: record.id,
            ignoredMaxBytes: run.checkpoints.ignoredMaxBytes,
            // the store keeps a run's checkpoints as long as its record is kept
            retention: RUN_RETENTION,
          },
          { env: process.env },
        )
      : null;
  // a hosted run never prompts: its host's stdin is not a terminal to ask on
  const interactive = !host && !!process.stdin.isTTY && !!process.stderr.isTTY;
  // Ctrl-C or a CI cancel stops the run gracefully: tools are killed, the refs saved, exit 130; a second one exits at once.
  // A hosted run stops when its host aborts it (the host handles the process's signals)
  const interrupt = new AbortController();
  if (host) {
    if (host.signal.aborted) interrupt.abort();
    else host.signal.addEventListener('abort', () => interrupt.abort(), { once: true });
  } else {
    onStopSignals((signal) => {
      log.warn(`${signal}: stopping (the run's refs are saved); send it again to exit at once`);
      interrupt.abort();
    });
  }
  // after the signal handlers: a Ctrl-C while they start still closes them. Their tools go to the brain that runs
  const mcp = run.mcp.servers.length
    ? await startMcpServers(
        {
          servers: run.mcp.servers,
          timeoutMs: run.mcp.timeoutMs,
          required: !!options.mcpRequired,
          brain: skill === 'ask' ? run.repl.brains.ask : run.repl.brains.act,
          readOnly: run.mcp.readOnly,
        },
        { cwd: run.cwd, env: process.env, log, signal: interrupt.signal },
      )
    : null;
  if (mcp) io.closeOnExit(() => mcp.close());
  // an MCP tool is known once its server lists it: a deny rule naming a started server's tool it does not have is said
  if (run.rules)
    for (const box of mcp?.boxes ?? [])
      for (const warning of findUnmatchedMcpDenyRules({
        ...run.rules,
        server: box.server,
        toolNames: box.definitions.map((definition) => definition.name),
      }))
        io.warn(warning);
  // the working directory's start state is walked while the first request is answered: the first tool call waits for it
  run.audit.begin();
  const partial = options.output === 'stream-json' && !!options.includePartial;
  if (options.output === 'stream-json')
    sinks.add(genStreamJsonSink({ skill, writeLine: io.writeLine, redact, interrupted: () => interrupt.signal.aborted }));
  if (host?.sink) sinks.add(host.sink);
  sinks.onStart({ atom: run.atom.slug, cwd: run.cwd, record: record.dir });
  const context: BhrainContext = {
    cwd: run.cwd,
    addDirs: run.addDirs,
    log,
    env: process.env,
    fetch: nodeHttpFetch, // the SDKs send over node:http: a one-shot run never loads undici (its wasm parser holds exit)
    timeoutMs: run.timeoutMs,
    signal: interrupt.signal,
    spillDir: record.spillDir,
    redact,
    prompter: interactive ? genTtyPrompter({ stdin: process.stdin, stderr: process.stderr, redact, pause: log.pause }) : undefined,
    onEvent: (event) => sinks.onEvent(event, 'session'),
    // the subagents' own events: telemetry follows their sessions, model calls and tool calls; the audit, what their bash
    // put right; the progress display, their tool calls
    onSubagentEvent: (event) => sinks.onEvent(event, 'subagent'),
    // streamed text only with --include-partial-messages: without a listener, the session does not stream it
    onTextDelta: partial ? (text) => sinks.onDelta({ type: 'TextDelta', text }) : undefined,
    onTextReset: partial ? () => sinks.onDelta({ type: 'TextReset' }) : undefined,
    onReasoningDelta: partial ? (text) => sinks.onDelta({ type: 'ReasoningDelta', text }) : undefined,
    checkpointer: checkpointer ?? undefined,
  };
  return { context, record, checkpointer };
};
