// The form body serializer: the contract's documented encoding, application/x-www-form-urlencoded.
/** Undefined fields are left out; null is sent as an empty value, which the API reads as "clear" (null). */
export function formBody(body: unknown): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (value !== undefined) form.append(name, value === null ? '' : String(value));
  }
  return form.toString();
}
