// Assertions and raw requests shared by the error tests: the problem+json form every error has, the fields a
// validation problem names, and requests that fetch cannot make (it always adds an Accept header, and a Content-Type to a string body).
import { request as httpRequest } from 'node:http';
import { expect } from 'vitest';
import type { components } from '../../generated/api.js';
import { PROBLEM_TYPE_BASE } from '../../server/http/problems/problem.js';
import { checkResponse } from './contract.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Asserts the RFC 9457 form every error shares (request_id equal to X-Request-Id) and returns the body. */
export async function expectProblem(response: Response, status: number): Promise<Record<string, unknown>> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json(;|$)/);
  const body = (await response.json()) as Record<string, unknown>;
  expect(body).toEqual(
    expect.objectContaining({
      type: expect.stringMatching(new RegExp(`^${PROBLEM_TYPE_BASE.replaceAll('.', '\\.')}[a-z-]+$`)),
      title: expect.stringMatching(/\S/),
      status,
      detail: expect.stringMatching(/\S/),
      request_id: response.headers.get('x-request-id'),
    }),
  );
  return body;
}

/**
 * A request through node:http, which sends no header it is not given: no default Accept, no Content-Type for
 * a body. The answer is checked against the spec like every other.
 */
export function rawRequest(
  origin: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Response> {
  const url = `${origin}${path}`;
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        const status = res.statusCode ?? 0;
        const text = Buffer.concat(chunks).toString('utf8');
        const response = new Response(status === 204 ? null : text, { status, headers: responseHeaders });
        checkResponse(method, url, response).then(() => resolve(response), reject);
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The bad fields a validation problem names, as "location:field", sorted. */
export function fieldsOf(problem: components['schemas']['problem'] | undefined): string[] {
  return (problem?.errors ?? []).map((e) => `${e.location}:${e.field}`).sort();
}
