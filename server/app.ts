// Builds the Express app without listening: the steps of every request (the list given to everyRequest below),
// then /api/v1 (http/api/api-routes.ts, where each operation's chain is written in the order it runs), then
// the service's other pages; a problem raised anywhere becomes problem+json (http/problems/errors.ts).
// server/ARCHITECTURE.md walks one request through them.
import express, { type Express } from 'express';
import { cachedAuthenticator } from './accounts/keys.js';
import type { Database } from './db/database.js';
import { serviceSecret } from './db/service-secrets.js';
import { type DomainChecks, defaultDomainChecks } from './domains/checks.js';
import { DEFAULT_EVENT_SETTINGS, type EventSettings } from './events/settings.js';
import type { FieldFormat } from './formats.js';
import { type KeyCheck, requireApiKey } from './http/access/auth.js';
import { type CorsOrigins, cors } from './http/access/cors.js';
import { type RateLimitSettings, rateLimits, type TrustProxy } from './http/access/rate-limit.js';
import { refuseByPolicy } from './http/access/scopes.js';
import { apiRoutes } from './http/api/api-routes.js';
import { dispatch } from './http/api/dispatch.js';
import { parseQuery } from './http/api/route-ends.js';
import { cursorFormats, cursorSeal } from './http/conventions/cursor.js';
import { apiIndex, DOCS_PAGE, docsPage, docsSlash } from './http/pages/docs.js';
import { healthz, readyz } from './http/pages/health.js';
import { specDocument } from './http/pages/spec-documents.js';
import { everyRequest } from './http/pipeline/every-request.js';
import { boundInputs } from './http/pipeline/input-limits.js';
import { type Metrics, metricsEndpoint } from './http/pipeline/metrics.js';
import { requestId } from './http/pipeline/request-id.js';
import { requestLog } from './http/pipeline/request-log.js';
import { readRequestTarget } from './http/pipeline/request-target.js';
import { requestTrace } from './http/pipeline/request-trace.js';
import { securityHeaders } from './http/pipeline/security-headers.js';
import { notFoundOutsideApi, problemHandler } from './http/problems/errors.js';
import { problemTypePage } from './http/problems/problem-types.js';
import { routeTable } from './http/routing/routes.js';
import { readBody } from './http/validation/body.js';
import { prepareValidation, type RequestValidation } from './http/validation/request-validation.js';
import { idempotentCreates } from './idempotency/runner.js';
import { createLogger, type Logger } from './logger.js';
import { formatsOf, handlersOf } from './resource.js';
import { MODULES } from './resources.js';
import { ApiSpec } from './spec-model.js';
import { tracing } from './tracing.js';
import { webhookFanOut } from './webhooks/fan-out.js';
import { webhookRedelivery } from './webhooks/redelivery.js';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from './webhooks/settings.js';

/** The spec's custom formats: the resource modules' fields, and the list cursor's that every list shares. */
export const FORMATS: Record<string, FieldFormat> = { ...formatsOf(MODULES), ...cursorFormats };

export interface AppDeps {
  db: Database;
  logger?: Logger;
  spec?: ApiSpec;
  /** Check every JSON response against the spec too (on in tests: a response that breaks it is a 500). */
  validateResponses?: boolean;
  /**
   * The validation of `spec`'s requests (prepareValidation), when one is shared: the warm-up's app and the app
   * that serves use one, so that what the warm-up compiled serves. Made from `spec` and `validateResponses` if not.
   */
  validation?: RequestValidation;
  /** Origins whose browser pages may call the API (CORS); any origin by default. */
  corsOrigins?: CorsOrigins;
  /** The API reference page that `npm run docs` builds, served at /docs. */
  docsFile?: string;
  /** A key the /docs console fills in (the sandbox's: any well-formed key is an account there). */
  docsSandboxKey?: string;
  /** Read and compress the /docs page at start instead of on its first request. */
  prepareDocs?: boolean;
  /** Whether the service is draining (server/lifecycle.ts): /readyz then answers 503. */
  isDraining?: () => boolean;
  /** Strict-Transport-Security max-age; 0 (the default) sends none. */
  hstsMaxAgeSeconds?: number;
  /** Quotas per API key and per address (for failed authentication); none unless given. */
  rateLimit?: RateLimitSettings;
  /** Which proxies' X-Forwarded-For gives the client's address (Express's `trust proxy`); none by default. */
  trustProxy?: TrustProxy;
  /** Request counts and latencies (Prometheus); none are kept without it. */
  metrics?: Metrics;
  /** Serves `metrics` at /metrics on this app, to `Authorization: Bearer <metricsToken>` only. */
  metricsToken?: string;
  /** How a bearer token becomes an account: the API keys in `db` by default (the sandbox has its own). */
  keyCheck?: KeyCheck;
  /** The secret list cursors are sealed with (CURSOR_KEY); by default the database's own, shared by its instances. */
  cursorKey?: string;
  /** DNS lookups, check schedule and verify limit of domains; the system's resolvers and defaults unless given. */
  domainChecks?: DomainChecks;
  /** Webhook endpoints' limits and safe targets (server/webhooks/settings.ts); the defaults unless given. */
  webhooks?: WebhookSettings;
  /** The event log's retention (server/events/settings.ts), which bounds a recovery's window; the defaults unless given. */
  events?: EventSettings;
}

export async function createApp({
  db,
  logger = createLogger('silent'),
  spec = ApiSpec.load(),
  validateResponses = false,
  validation = prepareValidation(spec, routeTable(spec), FORMATS, { validateResponses }),
  corsOrigins = '*',
  docsFile = DOCS_PAGE,
  docsSandboxKey,
  prepareDocs = false,
  isDraining = () => false,
  hstsMaxAgeSeconds = 0,
  rateLimit = {},
  trustProxy = false,
  metrics,
  metricsToken,
  keyCheck = cachedAuthenticator(db),
  cursorKey,
  domainChecks = defaultDomainChecks(),
  webhooks = DEFAULT_WEBHOOK_SETTINGS,
  events = DEFAULT_EVENT_SETTINGS,
}: AppDeps): Promise<Express> {
  const cursors = cursorSeal(async () => (cursorKey ? Buffer.from(cursorKey, 'utf8') : serviceSecret(db, 'cursor')));
  // Handlers on any connection: the app's, or the transaction of an idempotent create.
  const services = {
    domainChecks,
    webhooks,
    events,
    fanOut: webhookFanOut(webhooks),
    redeliverEvent: webhookRedelivery(webhooks),
  };
  const handlersOn = (on: Database) => handlersOf(on, services, MODULES);

  const app = express();
  app.disable('x-powered-by');
  // Express's own last-resort handler prints stack traces unless its env is "production".
  app.set('env', 'production');
  // Express's own ETags (a hash of each body) are off: the handlers send the record's ETag (id and version).
  app.set('etag', false);
  // "/API/V1/domains" and "/domains/" are not the spec's paths.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  // Node's querystring, as Express's "simple" parser, sharing its one parse with the first step of each operation.
  app.set('query parser', parseQuery);
  app.set('trust proxy', trustProxy);

  const traced = tracing();
  // Every request, then /api/v1 (each path of the spec, its chains: http/api/api-routes.ts), then the other pages.
  app.use(
    everyRequest([
      requestId,
      requestLog(logger),
      ...(metrics ? [metrics.observe] : []),
      ...(traced ? [requestTrace(traced, spec.basePath)] : []),
      securityHeaders({ hstsMaxAgeSeconds }),
      boundInputs,
      readRequestTarget,
    ]),
  );
  const [failedAuthGuard, perKeyLimit] = rateLimits(rateLimit, logger);
  const routes = routeTable(spec);
  apiRoutes(app, routes, spec.basePath, {
    cors: cors(corsOrigins),
    authenticate: requireApiKey(keyCheck, refuseByPolicy),
    perKeyLimit,
    failedAuthGuard,
    readBody,
    validation,
    cursors,
    handle: dispatch(handlersOn(db), idempotentCreates(db, handlersOn, logger)),
  });
  app.get('/healthz', healthz);
  app.get('/readyz', readyz(db, isDraining, logger));
  app.get('/openapi.json', specDocument(spec, 'json'));
  app.get('/openapi.yaml', specDocument(spec, 'yaml'));
  app.get('/', apiIndex(spec));
  app.get(
    '/docs',
    docsPage(docsFile, { prepareNow: prepareDocs, ...(docsSandboxKey ? { sandboxKey: docsSandboxKey } : {}) }),
  );
  app.get('/docs/', docsSlash);
  if (metrics && metricsToken) app.get('/metrics', metricsEndpoint(metrics, metricsToken));
  app.get('/problems/:kind', problemTypePage(spec));

  app.use(notFoundOutsideApi(routes, spec.basePath));
  app.use(problemHandler(logger));
  return app;
}
