import { readFileSync } from 'node:fs';
import type { Agent } from 'node:http';

import { setGlobalErrorHandler } from '@opentelemetry/core';
import { AggregationTemporalityPreference, OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';

import type { BhrainEvent } from '../../agent/events.js';
import { genEventSpans } from './genEventSpans.js';

/** .what = the package's version (dist/cli/telemetry/ → ../../../package.json): the service.version of every span */
const readVersion = (): string => JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')).version;

/** .what = the most the end of a run waits for its spans and metrics to be sent, and the most one export request waits */
export const TELEMETRY_FLUSH_BOUND_MS = 2000;

/**
 * .what = an http(s) agent whose sockets never keep the process alive
 * .why = a collector that accepts the connection and never answers must not hold the CLI's exit: the run's end waits
 *        at most TELEMETRY_FLUSH_BOUND_MS, and then nothing of telemetry's is left to wait for
 */
const genUnrefAgent = async (protocol: string): Promise<Agent> => {
  const module = protocol === 'http:' ? await import('node:http') : await import('node:https');
  const agent = new module.Agent({ keepAlive: true });
  const create = agent.createConnection.bind(agent) as (...args: unknown[]) => { unref?: () => void } | undefined;
  (agent as unknown as { createConnection: (...args: unknown[]) => unknown }).createConnection = (...args: unknown[]) => {
    const socket = create(...args);
    socket?.unref?.();
    return socket;
  };
  return agent;
};

/** .what = the export request timeout: OTEL_EXPORTER_OTLP_[<SIGNAL>_]TIMEOUT when it is lower than the bound, else the bound */
const readTimeoutMs = (env: Record<string, string | undefined>, signal: 'TRACES' | 'METRICS'): number => {
  const given = Number(env[`OTEL_EXPORTER_OTLP_${signal}_TIMEOUT`] ?? env.OTEL_EXPORTER_OTLP_TIMEOUT);
  return Number.isFinite(given) && given > 0 ? Math.min(given, TELEMETRY_FLUSH_BOUND_MS) : TELEMETRY_FLUSH_BOUND_MS;
};

/** .what = the telemetry of one run: every event in, and the run's end (its spans ended, all of it flushed, bounded) */
export interface RunTelemetry {
  onEvent: (event: BhrainEvent) => void;
  /** ends the run's spans and flushes traces and metrics, waiting at most TELEMETRY_FLUSH_BOUND_MS; never throws */
  close: (outcome: { exitCode: number; prompt: string | null; output: string | null }) => Promise<void>;
}

/**
 * .what = starts a run's OpenTelemetry: an OTLP/HTTP (JSON) trace and metric exporter configured by the standard OTEL_*
 *         variables (the exporters read them: OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, OTEL_SERVICE_NAME,
 *         OTEL_RESOURCE_ATTRIBUTES, ...), fed by the run's events
 * .why = loaded only when BHRAIN_TELEMETRY=1 (runSkill imports this module then): a run without it loads no OTel code.
 *        A collector that is down or slow never fails nor slows the run: spans go out in the background, the end waits
 *        at most 2 s, and an export that failed is one warning on stderr
 */
export const startRunTelemetry = (
  input: {
    skill: string;
    /** OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER: none turns a signal off */
    signals: { traces: boolean; metrics: boolean };
    logPrompts: boolean;
    redact: (text: string) => string;
    redactJson: (value: unknown) => string;
  },
  context: { env: Record<string, string | undefined>; warn: (message: string) => void },
): RunTelemetry => {
  const { env } = context;
  const version = readVersion();
  // the SDK reports an export that failed to its global handler: the first one is said at the end, once
  const failures: string[] = [];
  setGlobalErrorHandler((error) => {
    if (failures.length < 1) failures.push(input.redact(String((error as Error)?.message ?? error)));
  });
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'bhrain', [ATTR_SERVICE_VERSION]: version }))
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over ours
    .merge(detectResources({ detectors: [envDetector] }));
  // a signal turned off (OTEL_*_EXPORTER=none) has no exporter: its spans or metrics are made and dropped
  const traceExporter = input.signals.traces
    ? new OTLPTraceExporter({ timeoutMillis: readTimeoutMs(env, 'TRACES'), httpAgentOptions: genUnrefAgent })
    : null;
  const tracerProvider = new TracerProvider({
    resource,
    spanProcessors: traceExporter
      ? [new BatchSpanProcessor({ exporter: traceExporter, exportTimeoutMillis: readTimeoutMs(env, 'TRACES') })]
      : [],
  });
  const metricExporter = input.signals.metrics
    ? new OTLPMetricExporter({
        timeoutMillis: readTimeoutMs(env, 'METRICS'),
        httpAgentOptions: genUnrefAgent,
        // each run is its own process: deltas sum across runs in any backend, unless the standard variable says otherwise
        ...(env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE ? {} : { temporalityPreference: AggregationTemporalityPreference.DELTA }),
      })
    : null;
  const meterProvider = new MeterProvider({
    resource,
    readers: metricExporter
      ? [new PeriodicExportingMetricReader({ exporter: metricExporter, exportTimeoutMillis: readTimeoutMs(env, 'METRICS') })]
      : [],
  });
  const spans = genEventSpans({
    tracer: tracerProvider.getTracer('bhrain', version),
    meter: meterProvider.getMeter('bhrain', version),
    skill: input.skill,
    redact: input.redact,
    redactJson: input.redactJson,
    logPrompts: input.logPrompts,
  });
  return {
    onEvent: (event) => {
      try {
        spans.onEvent(event);
      } catch (error) {
        // telemetry never stops a run: a span it could not make is said once, at the end
        if (failures.length < 1) failures.push(input.redact(`a span for ${event.type} failed: ${(error as Error)?.message ?? error}`));
      }
    },
    close: async (outcome) => {
      // every span ends before the providers flush what they hold
      try {
        spans.end(outcome);
      } catch (error) {
        failures.push(input.redact(`the run's spans could not end: ${(error as Error)?.message ?? error}`));
      }
      let timer: NodeJS.Timeout | undefined;
      const flushed = await Promise.race([
        Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]).then((settled) => {
          for (const each of settled)
            if (each.status === 'rejected') failures.push(input.redact(String(each.reason?.message ?? each.reason)));
          return true;
        }),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), TELEMETRY_FLUSH_BOUND_MS))),
      ]);
      clearTimeout(timer);
      const where = input.redact(env.OTEL_EXPORTER_OTLP_ENDPOINT || 'http://localhost:4318');
      if (!flushed)
        context.warn(`telemetry: the export to ${where} did not finish within 2 s; what was left is dropped (the run is unaffected)`);
      else if (failures.length) context.warn(`telemetry: the export to ${where} failed: ${failures[0]} (the run is unaffected)`);
    },
  };
};
