// The command line: options, their checks and the --help text. Bad usage is a UsageError (exit code 2).
import type { Profile } from './context.js';
import { CHECKS, type CheckName } from './results.js';
import { defaultStateFile } from './rotation.js';
import type { ConformanceOptions } from './run.js';

export class UsageError extends Error {}

export const HELP = `Usage: DSS_API_KEY=<key> [DSS_SECOND_API_KEY=<key>] npm run conformance -- --base-url <url> [options]

Checks a deployment against the OpenAPI spec: generated valid and invalid requests (on a path id: records
the run made, and ids the account does not own, which must get the documented 404), an Accept the operation
cannot answer (406), a body over 1 MiB (413), a repeated unique field (409), credentials, methods, odd ids,
stateful scenarios and account isolation. Exit code 0 when no check failed, 1 when one did, 2 for bad usage
or a target that cannot be tested (unreachable, or every request answered 404 or 401; checked first).

  --base-url <url>         where the spec's paths are mounted, e.g. http://127.0.0.1:3000/api/v1
                           (Prism: its root, e.g. http://127.0.0.1:4010)
  DSS_API_KEY              (environment) a key of the account the run works in
  DSS_SECOND_API_KEY       (environment) a key of another account, for the account_isolation check
  DSS_READONLY_API_KEY     (environment) a key of the first account holding only the read scopes, for the
                           scope_enforced check: writes must get 403 naming their scope
  --api-key <key>          instead of DSS_API_KEY; npm prints the command line, so the key lands in logs
  --second-api-key <key>   instead of DSS_SECOND_API_KEY; the same caveat
  --read-only-api-key <key>
                           instead of DSS_READONLY_API_KEY; the same caveat
  --seed <n>               reproduce a run: the same seed sends the same requests (default: random, printed)
  --cases <n>              generated valid and invalid cases per operation (default 50); an operation on
                           a path id gets n valid cases, about one in four on an id the account does not own;
                           sized down, saying so, when they do not fit in the run's share of the key's quota
  --spec <path-or-url>     the spec (default generated/openapi.yaml)
  --only <check,...>       run only these checks
  --profile <p>            auto (default): a target seen to keep no state is a mock, as under "mock";
                           server: every check applies and the target must keep state; mock: skip the
                           stateful checks and what a mock such as Prism cannot honour (each skip is
                           reported with its reason, never as passed)
  --concurrency <n>        requests in flight at once (default 4)
  --rate-limit-budget <n>  at the end, spend up to n requests of the key's quota until a 429 (the
                           rate_limited check; leaves the key limited for the rest of its window)
  --auth-probes <n>        credential probes (401) to send this run (default: half of what the address's
                           failed-authentication budget has left; the runs after it send the others in turn)
  --state <file>           where the coverage across runs is kept, per base URL (default
                           $XDG_STATE_HOME/dss-conformance/state.json, ~/.local/state when unset)
  --no-state               keep none: each run's slice of the probes follows its seed
  --webhook-url <url>      a receiver the deployment may call, forwarding to the runner's own (which listens
                           on --webhook-port): the webhook deliveries are checked end to end
  --webhook-port <n>       the port the runner's receiver listens on (default: the port of --webhook-url
                           when its host is this machine, else one the system picks)
  --junit <file>           also write JUnit XML
  --report <file>          also write the text report
  --help                   this text

Checks: ${CHECKS.join(', ')}
`;

export interface CliOptions extends ConformanceOptions {
  junit?: string;
  reportFile?: string;
  help?: boolean;
}

const positiveInt = (name: string, value: string) => {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`${name} must be a positive integer`);
  return Number(value);
};

/** The key options given on the command line, where npm echoes them (and ps and shell history keep them). */
export function keysOnCommandLine(argv: string[]): string[] {
  const flags = argv.map((arg) => arg.split('=', 1)[0] ?? arg);
  return ['--api-key', '--second-api-key', '--read-only-api-key'].filter((flag) => flags.includes(flag));
}

export function parseArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): CliOptions {
  const values = new Map<string, string>();
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (arg === '--no-state') {
      values.set('no-state', '1');
      continue;
    }
    const [flag, inline] = arg.startsWith('--') ? arg.split(/=(.*)/s, 2) : [arg];
    const known = [
      '--base-url',
      '--api-key',
      '--second-api-key',
      '--read-only-api-key',
      '--seed',
      '--cases',
      '--spec',
      '--only',
      '--profile',
      '--concurrency',
      '--rate-limit-budget',
      '--auth-probes',
      '--state',
      '--webhook-url',
      '--webhook-port',
      '--junit',
      '--report',
    ];
    if (!flag || !known.includes(flag)) throw new UsageError(`unknown argument ${arg}`);
    const value = inline ?? argv[++i];
    if (value === undefined || value.startsWith('--')) throw new UsageError(`${flag} needs a value`);
    values.set(flag.slice(2), value);
  }
  if (help) return { help: true, baseUrl: '', apiKey: '' };
  const baseUrl = values.get('base-url');
  const apiKey = values.get('api-key') ?? env.DSS_API_KEY;
  if (!baseUrl) throw new UsageError('--base-url is required');
  if (!/^https?:\/\/[^/]/.test(baseUrl)) throw new UsageError('--base-url must be an http(s) URL');
  if (!apiKey) throw new UsageError('DSS_API_KEY (or --api-key) is required');
  const options: CliOptions = { baseUrl, apiKey };
  const second = values.get('second-api-key') ?? env.DSS_SECOND_API_KEY;
  if (second) options.secondApiKey = second;
  const readOnly = values.get('read-only-api-key') ?? env.DSS_READONLY_API_KEY;
  if (readOnly) options.readOnlyApiKey = readOnly;
  const seed = values.get('seed');
  if (seed !== undefined) {
    if (!/^-?\d+$/.test(seed) || !Number.isSafeInteger(Number(seed))) throw new UsageError('--seed must be an integer');
    options.seed = Number(seed);
  }
  const cases = values.get('cases');
  if (cases !== undefined) options.cases = positiveInt('--cases', cases);
  const concurrency = values.get('concurrency');
  if (concurrency !== undefined) options.concurrency = positiveInt('--concurrency', concurrency);
  const budget = values.get('rate-limit-budget');
  if (budget !== undefined) options.rateLimitBudget = positiveInt('--rate-limit-budget', budget);
  const authProbes = values.get('auth-probes');
  if (authProbes !== undefined) options.authProbes = positiveInt('--auth-probes', authProbes);
  const state = values.get('state');
  if (state && values.has('no-state')) throw new UsageError('--state and --no-state exclude each other');
  if (!values.has('no-state')) options.stateFile = state ?? defaultStateFile(env);
  const webhookUrl = values.get('webhook-url');
  if (webhookUrl !== undefined) {
    if (!/^https?:\/\/[^/]/.test(webhookUrl)) throw new UsageError('--webhook-url must be an http(s) URL');
    options.webhookUrl = webhookUrl;
  }
  const webhookPort = values.get('webhook-port');
  if (webhookPort !== undefined) {
    if (!/^\d+$/.test(webhookPort) || Number(webhookPort) > 65535)
      throw new UsageError('--webhook-port must be a port number');
    options.webhookPort = Number(webhookPort);
  }
  const spec = values.get('spec');
  if (spec) options.spec = spec;
  const only = values.get('only');
  if (only !== undefined) {
    const names = only
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    const unknown = names.filter((name) => !(CHECKS as readonly string[]).includes(name));
    if (unknown.length || names.length === 0)
      throw new UsageError(`--only: unknown check ${unknown.join(', ')} (known: ${CHECKS.join(', ')})`);
    options.only = names as CheckName[];
  }
  const profile = values.get('profile');
  if (profile !== undefined) {
    if (!['auto', 'server', 'mock'].includes(profile)) throw new UsageError('--profile must be auto, server or mock');
    options.profile = profile as Profile;
  }
  const junit = values.get('junit');
  if (junit) options.junit = junit;
  const report = values.get('report');
  if (report) options.reportFile = report;
  return options;
}
