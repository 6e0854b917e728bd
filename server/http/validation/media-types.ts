// The two media types a store or update body may have: a form (the documented encoding) or JSON.
export const FORM = 'application/x-www-form-urlencoded';
export const JSON_TYPE = 'application/json';

/**
 * What a 415 tells the client: the media types THIS operation accepts (its spec's request body), as
 * Content-Type headers to send.
 */
export function acceptedBodies(mediaTypes: readonly string[]): string {
  const accepted = mediaTypes.length > 0 ? mediaTypes : [FORM, JSON_TYPE];
  const only = accepted.length === 1 ? ' only' : '';
  return `This operation takes ${accepted.map((type) => `"Content-Type: ${type}"`).join(' or ')}${only}.`;
}
