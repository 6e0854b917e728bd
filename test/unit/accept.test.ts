// Accept negotiation (RFC 9110 §12.5.1) as a table: 406 only when the header rules out both application/json
// and application/problem+json.
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { admitsApiTypes } from '../../server/http/api/route-ends.js';

function requestWith(accept: string | undefined): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  if (accept !== undefined) req.headers.accept = accept;
  return req;
}

describe('Accept', () => {
  it.each([
    [undefined, true],
    ['', true],
    ['application/json', true],
    ['application/problem+json', true],
    ['APPLICATION/JSON', true],
    ['application/json; charset=utf-8', true],
    ['application/problem+json;charset="UTF-8"', true],
    ['*/*', true],
    ['application/*', true],
    ['text/html, application/json;q=0.1', true],
    ['application/json;q=0, */*', true],
    ['application/json;q=0, application/problem+json;q=0.5', true],
    ['text/html', false],
    ['text/*', false],
    ['image/png, text/plain;q=0.9', false],
    ['application/json;q=0', false],
    ['application/json;q=0, application/problem+json;q=0', false],
    ['application/*;q=0', false],
    ['*/*;q=0', false],
    ['application/xml', false],
    ['application/json; charset=iso-8859-1', false],
  ])('%j is served: %s', (accept, served) => {
    expect(admitsApiTypes(requestWith(accept))).toBe(served);
  });
});
