// The entry point's configuration as a table: each bad variable is refused by name, with the value it got (never
// a secret's). test/service/startup.test.ts starts the process once with bad variables, for the exit and output.
import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig } from '../../server/config.js';

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
