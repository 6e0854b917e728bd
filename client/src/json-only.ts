// The operations whose body is JSON only (webhook endpoints, redelivery: `enabled_events` is a list, which a form
// cannot carry unambiguously). The client sends JSON to them whatever its bodyEncoding, the raw client included,
// so that `client.raw.POST('/webhook-endpoints', …)` with the defaults creates an endpoint. The table is held to
// the contract by its type: an operation the contract makes JSON-only (or stops making so) does not compile
// until it is listed here (or removed).
import type { paths } from '../../generated/api.js';

type BodyMethod = 'post' | 'put' | 'patch';
const FORM = 'application/x-www-form-urlencoded';

/** 'json-only' for an operation whose request body has no form media type; never for one without a body. */
type Kind<O> = [O] extends [never]
  ? never
  : O extends { requestBody?: infer B }
    ? [NonNullable<B>] extends [never]
      ? never
      : NonNullable<B> extends { content: infer C }
        ? typeof FORM extends keyof C
          ? never
          : 'json-only'
        : never
    : never;

type JsonOnlyMethods<P extends keyof paths> = {
  [M in BodyMethod]: Kind<NonNullable<paths[P][M]>> extends never ? never : Uppercase<M>;
}[BodyMethod];

type JsonOnlyTable = {
  [P in keyof paths as [JsonOnlyMethods<P>] extends [never] ? never : P]: Record<JsonOnlyMethods<P>, true>;
};

const JSON_ONLY: JsonOnlyTable = {
  '/webhook-endpoints': { POST: true },
  '/webhook-endpoints/{id}': { PUT: true, PATCH: true },
  '/webhook-endpoints/{id}/recover': { POST: true },
  '/events/{id}/redeliver': { POST: true },
  '/api-keys': { POST: true },
  '/api-keys/{id}/rotate': { POST: true },
};

/** Whether the operation (path template and method, e.g. `/webhook-endpoints`, `POST`) takes JSON only. */
export function takesJsonOnly(path: string, method: string): boolean {
  const methods = (JSON_ONLY as Record<string, Record<string, true> | undefined>)[path];
  return methods?.[method.toUpperCase()] === true;
}
