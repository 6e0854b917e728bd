// A quota as configured (RATE_LIMIT, AUTH_FAILURE_LIMIT, DOMAIN_VERIFY_LIMIT): shared by the HTTP rate limits
// and the domains' verify limit, which the domain counts itself.

/** `limit` requests per `windowSeconds`, counted in fixed windows that start with the first request. */
export interface Quota {
  limit: number;
  windowSeconds: number;
}
