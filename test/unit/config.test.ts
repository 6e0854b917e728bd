// The entry point's configuration as a table: each bad variable is refused by name, with the value it got (never
// a secret's). test/service/startup.test.ts starts the process once with bad variables, for the exit and output.
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript without types, run before the service loads.
import { tracingConfigured } from '../../scripts/tracing-configured.mjs';
import { ConfigError, developmentSettings, readConfig } from '../../server/config.js';

describe('readConfig', () => {
  it.each([
    ['PORT', 'abc'],
    ['PORT', '65536'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'mysql://x'],
    ['CORS_ORIGINS', 'app.example'],
    ['CORS_ORIGINS', 'https://app.example/path'],
    ['METRICS_PORT', 'nine'],
  ])('refuses %s=%s, naming both', (variable, value) => {
    expect(() => readConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => readConfig({ [variable]: value })).toThrow(
      new RegExp(`${variable} must .*${value.replace('.', '\\.')}`),
    );
  });

  it('refuses a METRICS_TOKEN too short without echoing it', () => {
    expect(() => readConfig({ METRICS_TOKEN: 'short-secret' })).toThrow(/METRICS_TOKEN must be/);
    expect(() => readConfig({ METRICS_TOKEN: 'short-secret' })).not.toThrow(/short-secret/);
  });
});

describe('developmentSettings', () => {
  it.each([
    { env: {}, want: [] },
    { env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' }, want: ['WEBHOOK_ALLOW_PRIVATE_TARGETS=1'] },
    { env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: '0', RATE_LIMIT: '10/60' }, want: [] },
    { env: { RATE_LIMIT: 'off', AUTH_FAILURE_LIMIT: 'off' }, want: ['RATE_LIMIT=off', 'AUTH_FAILURE_LIMIT=off'] },
  ])('names $want for $env', ({ env, want }) => {
    expect(developmentSettings(readConfig(env))).toEqual(want);
  });
});

describe('tracingConfigured', () => {
  it.each([
    { env: {}, want: false },
    { env: { OTEL_SERVICE_NAME: 'x', OTEL_RESOURCE_ATTRIBUTES: 'a=b' }, want: false },
    { env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, want: true },
    { env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }, want: true },
    { env: { OTEL_TRACES_EXPORTER: 'otlp' }, want: true },
    { env: { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, want: false },
    { env: { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, want: false },
    { env: { OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, want: true },
  ])('is $want for $env', ({ env, want }) => {
    expect(tracingConfigured(env)).toBe(want);
  });
});
