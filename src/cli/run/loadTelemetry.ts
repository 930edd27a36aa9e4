import { redactDeep } from '../../core/secrets/redactDeep.js';
import { BadRequestError } from '../../core/contract/errors.js';
import type { RunTelemetry } from '../telemetry/startRunTelemetry.js';
import type { RunIo } from './genRunIo.js';

/** .what = an on/off variable: 0, false or unset is off; 1 or true is on; anything else is exit 2 naming it */
const readSwitch = (name: string, on: string): boolean => {
  const setting = process.env[name];
  if (setting !== undefined && !['0', '1', 'true', 'false', ''].includes(setting))
    throw new BadRequestError(`${name}=${setting}: give 1 or true (${on}), or 0 or false (off)`);
  return setting === '1' || setting === 'true';
};

/** .what = whether OpenTelemetry's exporter variable (OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER) leaves the signal on */
const readOtelExporter = (name: string): boolean => {
  const value = process.env[name];
  if (value === undefined || value === '' || value === 'otlp') return true;
  if (value === 'none') return false;
  throw new BadRequestError(
    `${name}=${value}: bhrain exports over OTLP only: give otlp, or none to send no ${name.split('_')[1].toLowerCase()}`,
  );
};

/**
 * .what = the run's OpenTelemetry, with BHRAIN_TELEMETRY=1: both switches checked now (a bad value is exit 2 before
 *         anything else), the OTel code loading while the run is prepared; start() makes it once the run is prepared
 * .why = a run without it loads no OTel module (start-up stays as it was), and a run that fails its checks never
 *        touches a collector
 */
export const loadTelemetry = (io: RunIo): { start: () => Promise<RunTelemetry> } | null => {
  const { env } = process;
  // OTEL_SDK_DISABLED=true is OpenTelemetry's own off switch, over every other setting
  if (!readSwitch('BHRAIN_TELEMETRY', 'export traces and metrics over OTLP') || env.OTEL_SDK_DISABLED === 'true') return null;
  const logPrompts = readSwitch('BHRAIN_TELEMETRY_LOG_PROMPTS', 'export the task, the answer and tool inputs and outputs, redacted');
  const signals = { traces: readOtelExporter('OTEL_TRACES_EXPORTER'), metrics: readOtelExporter('OTEL_METRICS_EXPORTER') };
  for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT']) {
    const url = env[name];
    // the exporters would fall back to localhost:4318 without a word
    if (url && !/^https?:\/\/[^/]/.test(url))
      throw new BadRequestError(`${name}=${url}: give the collector's http:// or https:// URL, e.g. http://localhost:4318`);
  }
  for (const name of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL'])
    if (env[name] && env[name] !== 'http/json')
      io.warn(`${name}=${env[name]} is not used: bhrain's telemetry sends OTLP over HTTP with JSON bodies (http/json)`);
  const loading = import('../telemetry/startRunTelemetry.js');
  // a failed preparation leaves the import unawaited: its failure, if any, is then nobody's to report
  loading.catch(() => {});
  const { redact } = io;
  return {
    start: async () =>
      (await loading).startRunTelemetry(
        { skill: io.skill, logPrompts, signals, redact, redactJson: (value) => JSON.stringify(redactDeep(value ?? null, redact)) },
        { env, warn: io.log.warn },
      ),
  };
};
