// The 412 is the error handler's, as the 503 is: a conditional write that finds its record at another version
// throws db/owned.ts's VersionMismatchError, and whichever handler let it through (none catches it) answers 412
// precondition-failed naming the record, never a 500, and logs no error.
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VersionMismatchError } from '../../server/db/owned.js';
import { everyRequest } from '../../server/http/pipeline/every-request.js';
import { requestId } from '../../server/http/pipeline/request-id.js';
import { problemHandler } from '../../server/http/problems/errors.js';
import { createLogger } from '../../server/logger.js';
import { expectProblem } from '../support/problems.js';

const logged: string[] = [];
let origin: string;
let close: () => void;

beforeAll(async () => {
  const app = express();
  app.use(everyRequest([requestId]));
  // A handler that forgets the conditional write can fail: it only writes.
  app.patch('/spaces/:id', () => {
    throw new VersionMismatchError('spaces', 7);
  });
  app.delete('/domains/:id', async () => {
    await Promise.resolve();
    throw new VersionMismatchError('domains', 9);
  });
  app.use(problemHandler(createLogger('warn', (line) => logged.push(line))));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
afterAll(() => close?.());

describe('a version mismatch no handler caught', () => {
  it.each([
    ['PATCH', '/spaces/7', 'The space with id 7 has changed'],
    ['DELETE', '/domains/9', 'The domain with id 9 has changed'],
  ])('%s %s answers 412 precondition-failed, not 500', async (method, path, detail) => {
    const problem = await expectProblem(await fetch(`${origin}${path}`, { method }), 412);
    expect(problem.type).toBe('/problems/precondition-failed');
    expect(problem.detail).toContain(detail);
    expect(logged.filter((line) => line.includes('"level":"error"'))).toEqual([]);
  });
});
