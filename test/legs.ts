// Which suite runs in which leg: `npm test` (SQLite, Node.js 20), `npm run test:postgres` (PostgreSQL, Node.js 20),
// the Node.js 24 leg of CI (SQLite, DSS_TEST_LEG=node24) and `npm run test:quick` (the inner loop, locally).
// test/vitest.config.ts and test/vitest.quick.config.ts read this table; CI runs the first three legs.

export type Leg = 'sqlite' | 'postgres' | 'node24' | 'quick';

export interface LegRule {
  /** A file, or a glob over files, relative to the repository's root. */
  suite: string;
  legs: Leg[];
  why: string;
}

/**
 * A suite listed nowhere runs on both engines and in the quick loop: an HTTP suite on an app of its own in the
 * test's process, cheap, and what it tests can differ by engine (the SQL). The Node.js 24 leg runs only the suites
 * that name it (includedIn): those whose outcome can differ by Node.js major (its HTTP parser, fetch, URL and
 * ICU, timers and signals, and the better-sqlite3 build each major loads), not every HTTP suite again. Heavy
 * suites (child processes, other programs, real-time waits) run where their outcome can differ, once if it
 * cannot; each is left out of the quick loop.
 */
export const LEG_RULES: LegRule[] = [
  // The pyramid's base.
  {
    suite: 'test/unit/**',
    legs: ['sqlite', 'node24', 'quick'],
    why: 'pure functions, no database; Node 24 has its own ICU and RegExp',
  },

  {
    suite: 'test/webhooks/kill.test.ts',
    legs: ['sqlite'],
    why: 'a child process killed and started again (tens of seconds); the claims it relies on are SQL the delivery suite runs on both engines',
  },
  {
    suite: 'test/webhooks/shutdown.test.ts',
    legs: ['sqlite'],
    why: "a child process stopped with attempts hanging, then a second one taking the abandoned attempts once their claims have run out; the runner's stop is the same code on both engines",
  },
  {
    suite: 'test/webhooks/kill-before-record.test.ts',
    legs: ['sqlite', 'postgres'],
    why: "a child process killed while the test holds the engine's own locks (SQLite's write lock, PostgreSQL's row locks); tens of seconds",
  },
  // Webhook delivery waits on real retries (hundreds of ms each) against a receiver: both engines, not the quick loop.
  {
    suite: 'test/webhooks/delivery.test.ts',
    legs: ['sqlite', 'postgres'],
    why: 'the outbox and the delivery claims are SQL that differs by engine; real-time retry waits',
  },
  {
    suite: 'test/webhooks/fairness.test.ts',
    legs: ['sqlite', 'postgres'],
    why: 'the fair claim is SQL (window functions) that differs by engine; receivers that hang for seconds',
  },
  {
    suite: 'test/webhooks/recovery.test.ts',
    legs: ['sqlite', 'postgres'],
    why: 'the recovery claim and its step lock rows differently by engine; two runners on one database; a receiver',
  },
  {
    suite: 'test/webhooks/notices.test.ts',
    legs: ['sqlite', 'postgres'],
    why: 'a receiver failing for seconds until its endpoint is disabled; the notices are fanned out in SQL by engine',
  },
  {
    suite: 'test/webhooks/pacing.test.ts',
    legs: ['sqlite', 'postgres'],
    why: 'the paced claim is SQL that differs by engine; two runners on one database; waits out a Retry-After',
  },
  {
    suite: 'test/webhooks/recovery-kill.test.ts',
    legs: ['sqlite', 'postgres'],
    why: 'a child process killed mid-recovery and started again; waits out the recovery lease (15 s)',
  },
  {
    suite: 'test/webhooks/answers.test.ts',
    legs: ['sqlite', 'postgres'],
    why: 'what PostgreSQL can store of an answer differs from SQLite (NUL bytes); real receivers and retries',
  },

  // The deployment's proof.
  {
    suite: 'test/deploy/**',
    legs: ['sqlite'],
    why: 'a production install, HAProxy in front of three instances, the rolling upgrade from the previous release, backups: each picks its own engines',
  },

  // The engines' own faults.
  {
    suite: 'test/faults/postgres-*.test.ts',
    legs: ['postgres'],
    why: "PostgreSQL's faults (connections cut, a lock held, an outage), on its own database whatever the leg",
  },
  {
    suite: 'test/faults/classify.test.ts',
    legs: ['sqlite', 'node24', 'quick'],
    why: 'sorts both drivers’ errors without a server; Node 24 loads another better-sqlite3 major',
  },
  {
    suite: 'test/faults/{sqlite-lock,sqlite-endpoint-delete,disk-full,read-only}.test.ts',
    legs: ['sqlite'],
    why: "SQLite's own faults on SQLite files whatever the leg; the driver's error codes are classify's, on Node 24 too",
  },
  {
    suite: 'test/faults/supervisor.test.ts',
    legs: ['sqlite'],
    why: "a supervisor's signals to `npm start`: neither the engine nor the Node.js major changes them",
  },
  {
    suite: 'test/db/upgrade-safe-migrations.test.ts',
    legs: ['sqlite', 'postgres'],
    why: "the previous release's migrations from git history, then ours: each engine's schema, not the Node.js major",
  },
  { suite: 'test/db/limits.test.ts', legs: ['sqlite', 'quick'], why: 'configuration read from the environment' },
  {
    suite: 'test/db/{group-commit,group-commit-model}.test.ts',
    legs: ['sqlite', 'node24', 'quick'],
    why: "the SQLite driver's group commit, on a file (and against a model); Node 24 loads another better-sqlite3 major",
  },
  {
    suite: 'test/db/private-files.test.ts',
    legs: ['sqlite', 'node24', 'quick'],
    why: 'SQLite files and backups made owner-only: files, not PostgreSQL; Node 24 loads another SQLite driver',
  },

  // The service as a process.
  {
    suite: 'test/service/startup.test.ts',
    legs: ['sqlite', 'postgres', 'node24'],
    why: 'the bundled entry point: its start on each engine, and on Node 24 with the other SQLite driver',
  },
  {
    suite: 'test/service/startup-config.test.ts',
    legs: ['sqlite'],
    why: "the entry point's logs, metrics port, failed starts and configuration errors: the same on any engine and major",
  },
  {
    suite: 'test/service/bundle.test.ts',
    legs: ['sqlite'],
    why: "npm start's bundle rebuilt when stale: files, not the engine; the legs after SQLite's share .build/ at once",
  },
  {
    suite: 'test/service/keys-cli-arguments.test.ts',
    legs: ['sqlite', 'node24'],
    why: "the keys command's refusals of its arguments, before any write: no engine changes them; Node's argv decoding may",
  },
  {
    suite: 'test/service/{keys-cli,keys-cli-policy,workers,key-revocation}.test.ts',
    legs: ['sqlite', 'postgres'],
    why: 'processes sharing one database (the keys command, workers): engine-dependent, not Node-dependent',
  },
  {
    suite: 'test/service/{lifecycle,drain-delay,node-version}.test.ts',
    legs: ['sqlite', 'node24'],
    why: "Node's sockets, pipes, timeouts and signals, and its version check: not the engine",
  },
  {
    suite: 'test/service/slow-readers.test.ts',
    legs: ['sqlite'],
    why: "1,100 never-reading connections at a 1,024-descriptor limit: heavy, and Node's sockets rather than the engine",
  },
  {
    suite: 'test/service/slow-log-reader.test.ts',
    legs: ['sqlite'],
    why: "the log's buffer in front of a stdout nobody reads: a child process on SQLite, not the engine",
  },
  {
    suite: 'test/service/worker-kill.test.ts',
    legs: ['sqlite'],
    why: 'WORKERS=2 with a worker killed under load three times: sockets and IPC between processes, not the engine',
  },
  {
    suite: 'test/service/{sandbox,rate-limit-redis,npm-start}.test.ts',
    legs: ['sqlite'],
    why: "an in-memory SQLite database of its own; counters in Redis; npm's banner and stdout: none depends on the leg",
  },
  // Observability: the service as a process with its collector, a real Prometheus and promtool.
  {
    suite: 'test/observability/tracing.test.ts',
    legs: ['sqlite', 'postgres'],
    why: 'WORKERS=2 exporting to a collector on loopback: the SQL spans differ by engine (our own for SQLite, the pg instrumentation)',
  },
  {
    suite: 'test/observability/migrate.test.ts',
    legs: ['sqlite', 'postgres'],
    why: 'npm run migrate as a child process on a fresh database of the engine under test',
  },
  {
    suite: 'test/observability/dead-collector.test.ts',
    legs: ['sqlite'],
    why: 'a collector that never answers, and the spans dropped: the exporter and its queue, not the engine',
  },
  {
    suite: 'test/observability/prometheus.test.ts',
    legs: ['sqlite'],
    why: 'promtool and a real Prometheus (Debian package) scraping the service with WORKERS=2: the exposition and the rules, not the engine',
  },
  {
    suite: 'test/service/library-boundaries.test.ts',
    legs: ['sqlite', 'quick'],
    why: 'reads the sources, runs nothing',
  },
  {
    suite: 'test/http/adversarial-input.test.ts',
    legs: ['sqlite', 'postgres', 'node24'],
    why: "the service's CPU per hostile request (a search reaches the engine); Node 24's parsers cost differently",
  },
  {
    suite: 'test/http/key-policy.test.ts',
    legs: ['sqlite', 'postgres'],
    why: "a key's expiry and a rotation's overlap, waited out in real time (seconds): both engines, not the inner loop",
  },
  {
    suite: 'test/http/scopes.test.ts',
    legs: ['sqlite'],
    why: 'every operation × every scope (over 150 requests): the scope check reads nothing from the engine, and is the same code on any Node.js major',
  },
  // What Node.js itself parses, encodes or compares: its HTTP parser (llhttp), URL and IDNA (ICU), the
  // addresses its `net` module classifies, and the SQLite driver each major loads.
  {
    suite: 'test/http/{hostile-input,errors,routing-errors,json-as-form,stored-text,cors,request-id}.test.ts',
    legs: ['sqlite', 'postgres', 'node24', 'quick'],
    why: "requests the HTTP parser, the body parsers and the text checks see first: Node 24's llhttp and ICU differ",
  },
  {
    suite: 'test/domains/{host-names,page-urls}.test.ts',
    legs: ['sqlite', 'postgres', 'node24', 'quick'],
    why: "names and URLs through Node's URL and IDNA (ICU), which each major bundles anew",
  },
  {
    suite: 'test/lists/{sort,search,cursor}.test.ts',
    legs: ['sqlite', 'postgres', 'node24', 'quick'],
    why: 'orders and matches of text (collation in SQL, normalisation in Node) and sealed cursors (node:crypto)',
  },
  {
    suite: 'test/webhooks/unsafe-targets.test.ts',
    legs: ['sqlite', 'postgres', 'node24', 'quick'],
    why: "webhook URLs and the addresses they resolve to, classified through Node's URL and net.BlockList",
  },
  {
    suite: 'test/db/sqlite.test.ts',
    legs: ['sqlite', 'postgres', 'node24', 'quick'],
    why: 'the SQLite driver as the service opens it: Node 24 loads better-sqlite3 13, Node 20 its 12',
  },
  {
    suite: 'test/http/rate-limit-redis.test.ts',
    legs: ['sqlite'],
    why: 'counters in a real Redis behind a proxy this test freezes: not the engine, not the Node.js major',
  },

  // Cheap per request, but each starts several apps (restarts, spec variants, sandbox accounts, its own listeners)
  // or seeds many records: seconds a file, the slowest of the quick loop.
  {
    suite: 'test/http/{sandbox-accounts,edge}.test.ts',
    legs: ['sqlite', 'postgres', 'node24'],
    why: 'a sandbox account or a listener of its own per test: every leg, not the inner loop',
  },
  {
    suite: 'test/lists/every-list.test.ts',
    legs: ['sqlite', 'postgres'],
    why: 'every list of the spec walked past a page, the delivery log filled by the delivery job through a real receiver: both engines, not the inner loop',
  },
  {
    suite: 'test/lists/{counts,search-index,search-many}.test.ts',
    legs: ['sqlite', 'postgres'],
    why: "hundreds of concurrent creates and deletes, or accounts seeded past the search index's thresholds: SQL on both engines, not the inner loop",
  },
  {
    suite: 'test/db/counts-and-search-migration.test.ts',
    legs: ['sqlite', 'postgres'],
    why: 'a migration run on a database seeded with records, then an app on it: both engines, not the inner loop',
  },
  {
    suite: 'test/http/response-validation.test.ts',
    legs: ['sqlite', 'postgres', 'node24'],
    why: "an app on a spec variant of its own, its validators compiled afresh (seconds; every quick suite's app still validates its replies): every leg, not the inner loop",
  },
  {
    suite: 'test/service/warm-up.test.ts',
    legs: ['sqlite', 'postgres', 'node24'],
    why: "the start's warm-up compiling every operation's schemas afresh (seconds): every leg, not the inner loop",
  },
  {
    suite: 'test/http/record-reads.test.ts',
    legs: ['sqlite', 'postgres', 'node24'],
    why: "a delivery worker and a receiver, waited for in real time (its setup can outlast a hook's limit on a loaded machine): every leg, not the inner loop",
  },
  {
    suite: 'test/lists/opaque-cursors.test.ts',
    legs: ['sqlite', 'postgres'],
    why: 'a second instance of the database and a restart: both engines, not the inner loop',
  },

  // The conformance runner.
  {
    suite: 'test/conformance/own-server.test.ts',
    legs: ['sqlite'],
    why: "the runner's full run (200 cases, webhooks end to end with its own receiver and a delivery worker) and its CLI; .ci/conformance runs it against PostgreSQL and the service's defaults",
  },
  {
    suite:
      'test/conformance/{as-it-comes,back-to-back,broken-server,narrow-key,plan,preflight,prism-mock,prism-proxy,rate-limit-fields,rotation,scopes}.test.ts',
    legs: ['sqlite'],
    why: "the runner's own logic and checks: the server's side of each is an HTTP suite of every leg",
  },

  // The client library.
  {
    suite: 'test/client/{browser,package,fresh-clone,prism}.test.ts',
    legs: ['sqlite'],
    why: 'Chromium, npm pack, a fresh clone, Prism: the client as consumers get it, not the service',
  },
  {
    suite: 'test/client/{rate-limit,retries}.test.ts',
    legs: ['sqlite', 'node24'],
    why: "the client waiting out real Retry-After seconds: the client's fetch differs by Node.js major, not by engine",
  },
  {
    suite: 'test/client/{errors,etags,helpers,idempotent-creates,list-all,options,verify-webhook}.test.ts',
    legs: ['sqlite', 'node24', 'quick'],
    why: "the client's behaviour, whatever engine answers; its fetch differs by Node.js major",
  },
  {
    suite: 'test/client/timeouts.test.ts',
    legs: ['sqlite', 'node24'],
    why: "the client's timeouts, waited out in real time: its fetch differs by Node.js major, not the inner loop",
  },
  {
    suite: 'test/client/webhook-helpers.test.ts',
    legs: ['sqlite', 'node24'],
    why: 'a delivery worker and a receiver, waited for in real time; the client, whatever engine answers',
  },

  // The spec's tooling and the docs.
  {
    suite: 'test/spec/{generators,generated-drift,compat-gate}.test.ts',
    legs: ['sqlite'],
    why: 'tsc, the generators and redocly over the spec: files in, files out',
  },
  {
    suite: 'test/spec/resources.test.ts',
    legs: ['sqlite', 'node24', 'quick'],
    why: 'the registry and the spec against the app built from them: no engine-specific step',
  },
  {
    suite: 'test/spec/spec-loading.test.ts',
    legs: ['sqlite', 'node24'],
    why: 'an app per spec variant (seconds a file): no engine-specific step, and not the inner loop',
  },
  {
    suite: 'test/docs/{docs-page,docs-build,code-samples}.test.ts',
    legs: ['sqlite'],
    why: 'the docs build (Scalar) and the page in Chromium: the same static page on any engine',
  },
  {
    suite: 'test/docs/{docs-route,host-independence,doc-links}.test.ts',
    legs: ['sqlite', 'node24', 'quick'],
    why: 'the page and the spec as served, and the links of the docs: no database involved',
  },

  // Domain states against a real DNS server (Knot, a process of its own).
  {
    suite: 'test/dns/answers.test.ts',
    legs: ['sqlite'],
    why: "what Knot's answers make of a verify: the observation is computed before any SQL, by Node's own resolver",
  },
  {
    suite: 'test/dns/states.test.ts',
    legs: ['sqlite', 'postgres'],
    why: 'the transitions and the move of a name are SQL (a partial unique index, row locks): both engines',
  },
  {
    suite: 'test/dns/checks-fair.test.ts',
    legs: ['sqlite', 'postgres'],
    why: "the fair claim is SQL (a window function; FOR UPDATE SKIP LOCKED on PostgreSQL); waits out the schedule's real seconds",
  },
  {
    suite: 'test/dns/routing.test.ts',
    legs: ['sqlite', 'postgres'],
    why: "routing's columns, its event and its list filter are SQL: both engines; Knot is a process of its own",
  },
  {
    suite: 'test/dns/race-postgres.test.ts',
    legs: ['postgres'],
    why: 'two service processes on one PostgreSQL database racing to prove one name, and sharing due checks',
  },
];

/** The leg this process runs, from the environment CI sets. */
export function currentLeg(env: NodeJS.ProcessEnv = process.env): Exclude<Leg, 'quick'> {
  if (env.DSS_TEST_DATABASE === 'postgres') return 'postgres';
  return env.DSS_TEST_LEG === 'node24' ? 'node24' : 'sqlite';
}

/**
 * The globs a leg runs: every suite for SQLite, PostgreSQL and the quick loop (less what excludedFrom leaves out),
 * and for the Node.js 24 leg only the suites whose rule names it.
 */
export function includedIn(leg: Leg): string[] {
  return leg === 'node24'
    ? LEG_RULES.filter((rule) => rule.legs.includes('node24')).map((rule) => rule.suite)
    : ['test/**/*.test.ts'];
}

/** The globs a leg leaves out: every listed suite that does not name it. */
export function excludedFrom(leg: Leg): string[] {
  return LEG_RULES.filter((rule) => !rule.legs.includes(leg)).map((rule) => rule.suite);
}
