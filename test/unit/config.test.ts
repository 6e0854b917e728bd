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

  it.each([
    ['DOMAIN_TARGET_CNAME', 'https://edge.platform.example', 'https://edge.platform.example'],
    ['DOMAIN_TARGET_CNAME', 'edge', 'edge'],
    ['DOMAIN_TARGET_A', '192.0.2.1,192.0.2.300', '192.0.2.300'],
    ['DOMAIN_TARGET_A', '2001:db8::1', '2001:db8::1'],
    ['DOMAIN_TARGET_AAAA', '2001:db8::1, 192.0.2.1', '192.0.2.1'],
    ['DOMAIN_TARGET_AAAA', '2001:db8::g', '2001:db8::g'],
  ])('refuses %s=%s, naming the setting and the malformed entry', (variable, value, entry) => {
    expect(() => readConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => readConfig({ [variable]: value })).toThrow(
      new RegExp(`${variable} must .*"${entry.replace(/[.:/]/g, '\\$&')}"`),
    );
  });

  it('reports every malformed routing target at once', () => {
    const problems = () =>
      readConfig({ DOMAIN_TARGET_CNAME: 'a b', DOMAIN_TARGET_A: 'x', DOMAIN_TARGET_AAAA: 'y' }).domainVerification;
    expect(problems).toThrow(/DOMAIN_TARGET_CNAME[\s\S]*DOMAIN_TARGET_A must[\s\S]*DOMAIN_TARGET_AAAA must/);
  });

  it('reads the routing targets: a normalised host name and canonical, de-duplicated addresses', () => {
    const { targets } = readConfig({
      DOMAIN_TARGET_CNAME: 'Edge.Platform.Example.',
      DOMAIN_TARGET_A: '192.0.2.10, 198.51.100.7,192.0.2.10',
      DOMAIN_TARGET_AAAA: '2001:DB8:0:0::10',
    }).domainVerification;
    expect(targets).toEqual({
      cname: 'edge.platform.example',
      a: ['192.0.2.10', '198.51.100.7'],
      aaaa: ['2001:db8::10'],
    });
    expect(readConfig({}).domainVerification.targets).toEqual({ cname: undefined, a: [], aaaa: [] });
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
