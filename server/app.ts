// Builds the Express app without listening. One request path, in the order of the steps below:
//   the steps of every request, in one router layer (http/every-request.ts): request id -> its log line and
//   metrics (written once answered) -> security headers -> input lengths (414/431) -> request target (400)
//   -> /api/v1, one route of the app per path of the spec (http/api-routes.ts): CORS -> the path's route (no
//   such path: 404; a method it lacks: 405, from the route itself; a preflight: 204) -> the operation's
//   steps: API key (401, or 429 for an address with too many of them; its expiry and address ranges) -> rate
//   limit per key (429) -> Accept (406) -> body, where the operation has one (415/413/400) -> the operation's
//   scope (403), then validation (422: express-openapi-validator, its security handler first, and our own
//   checks, in one problem: http/request-validation.ts) -> idempotency key (replay, 409, 422) -> handler
//   -> repository; a problem raised anywhere -> problem+json.
import express, { type Express } from 'express';
import { cachedAuthenticator } from './accounts/keys.js';
import type { Database } from './db/database.js';
import { serviceSecret } from './db/service-secrets.js';
import { type DomainChecks, defaultDomainChecks } from './domains/checks.js';
import type { FieldFormat } from './formats.js';
import { apiRoutes } from './http/api-routes.js';
import { type KeyCheck, requireApiKey } from './http/auth.js';
import { readBody } from './http/body.js';
import { type CorsOrigins, cors } from './http/cors.js';
import { cursorFormats, cursorSeal } from './http/cursor.js';
import { apiIndex, DOCS_PAGE, docsPage, docsSlash } from './http/docs.js';
import { notFoundOutsideApi, problemHandler } from './http/errors.js';
import { everyRequest } from './http/every-request.js';
import { healthz, readyz } from './http/health.js';
import { boundInputs } from './http/input-limits.js';
import { type Metrics, metricsEndpoint } from './http/metrics.js';
import { dispatch } from './http/operations.js';
import { problemTypePage } from './http/problem-types.js';
import { type RateLimitSettings, rateLimits, type TrustProxy } from './http/rate-limit.js';
import { requestId } from './http/request-id.js';
import { requestLog } from './http/request-log.js';
import { readRequestTarget } from './http/request-target.js';
import { prepareValidation, type RequestValidation } from './http/request-validation.js';
import { routeTable } from './http/routes.js';
import { refuseByPolicy } from './http/scopes.js';
import { securityHeaders } from './http/security-headers.js';
import { specDocument } from './http/spec-documents.js';
import { idempotentCreates } from './idempotency/runner.js';
import { createLogger, type Logger } from './logger.js';
import { formatsOf, handlersOf } from './resource.js';
import { MODULES } from './resources.js';
import { ApiSpec } from './spec-model.js';
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
}: AppDeps): Promise<Express> {
  const cursors = cursorSeal(async () => (cursorKey ? Buffer.from(cursorKey, 'utf8') : serviceSecret(db, 'cursor')));
  // Handlers on any connection: the app's, or the transaction of an idempotent create.
  const services = { domainChecks, webhooks, redeliverEvent: webhookRedelivery(webhooks) };
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
  app.set('query parser', 'simple');
  app.set('trust proxy', trustProxy);

  // Every request, then /api/v1 (a route per path of the spec: http/api-routes.ts), then the other pages.
  app.use(
    everyRequest([
      requestId,
      requestLog(logger),
      ...(metrics ? [metrics.observe] : []),
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
    readBody: readBody(),
    validation,
    handle: dispatch(handlersOn(db), idempotentCreates(db, handlersOn, logger), cursors),
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
