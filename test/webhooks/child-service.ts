// The service as a child process on a test's database, for the tests that kill it: started on port 0 with the
// settings given, its first key read from its output, and an endpoint subscribed to `space.created`.
import { expect } from 'vitest';
import { type Running, runScript, SERVICE } from '../service/process.js';

export interface ChildService {
  origin: string;
  run: Running;
}

/**
 * The settings every killed or stopped service of these tests runs with: port 0 on loopback, no rate limits (the
 * tests send bursts), private webhook targets allowed (their receivers are on 127.0.0.1); `settings` on top.
 */
export function serviceEnv(databaseUrl: string, settings: Record<string, string> = {}): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT: 'off',
    AUTH_FAILURE_LIMIT: 'off',
    DATABASE_URL: databaseUrl,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    ...settings,
  };
}

/** Starts services with `env()` and stops every one still running at `stopAll()`. */
export function childServices(env: () => Record<string, string>) {
  const runs: Running[] = [];
  return {
    async start(): Promise<ChildService> {
      const run = runScript(SERVICE, [], env());
      runs.push(run);
      const [, origin = ''] = await run.waitForOutput(/listening on (http:\/\/127\.0\.0\.1:\d+)/, 120_000);
      return { origin, run };
    },
    async stopAll(): Promise<void> {
      for (const run of runs) {
        if (run.child.exitCode === null && run.child.signalCode === null) await run.stop('SIGTERM');
      }
    },
  };
}

/** The first key's JSON request headers, and an endpoint at `url` for `space.created`: its id. */
export async function subscribeFirstKey(
  { origin, run }: ChildService,
  url: string,
): Promise<{ headers: Record<string, string>; endpoint: number }> {
  // In its output on a terminal, else in FIRST_KEY_FILE (a pipe here): polled, not waited for in the output.
  await expect.poll(() => run.firstKey(), { timeout: 30_000 }).toBeDefined();
  const headers = { Authorization: `Bearer ${run.firstKey() ?? ''}`, 'Content-Type': 'application/json' };
  const made = await fetch(`${origin}/api/v1/webhook-endpoints`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url, enabled_events: ['space.created'] }),
  });
  expect(made.status).toBe(201);
  return { headers, endpoint: ((await made.json()) as { data: { id: number } }).data.id };
}
