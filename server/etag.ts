// A record's strong entity tag, made of its id and version: what the HTTP layer compares
// (http/conventions/conditional.ts) and what an event carries, so that the domain and the event log need nothing
// of HTTP to write it.

/** `"<id>.<version>"`: changes with every change of the record, and never names another record. */
export function etagOf(id: number, version: number): string {
  return `"${id}.${version}"`;
}
