// The form body serializer: the contract's documented encoding, application/x-www-form-urlencoded.
/**
 * Undefined fields are left out; null is sent as an empty value, which the API reads as "clear" (null). An object
 * (metadata) is sent one field per key, `metadata[key]=value`, as the contract's deepObject encoding says.
 */
export function formBody(body: unknown): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (value === undefined) continue;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) {
        if (inner !== undefined) form.append(`${name}[${key}]`, inner === null ? '' : String(inner));
      }
      continue;
    }
    form.append(name, value === null ? '' : String(value));
  }
  return form.toString();
}
