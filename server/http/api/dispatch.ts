// The last step of every operation's chain: the handler of the operation routing found, given the validated
// request (routing/request-context.ts) as its input, typed per operation (routing/operations.ts); its reply
// written once, headers and body together.
import type { Request, Response } from 'express';
import type { Handlers, OperationId, Runner, UntypedReply } from '../routing/operations.js';
import type { ValidatedRequest } from '../routing/request-context.js';

type UntypedHandler = (input: ValidatedRequest) => Promise<UntypedReply>;

/**
 * Runs the operation's handler on the validated request (through `run`: the idempotency layer runs a create with
 * an Idempotency-Key in its own transaction), and writes its reply.
 */
export function dispatch(
  handlers: Handlers,
  run: Runner = (_request, handle) => handle(),
): (req: Request, res: Response, request: ValidatedRequest) => Promise<void> {
  return async (_req, res, request) => {
    const { route, requestId } = request;
    // The spec matched the operation at run time; its input and reply were checked per operation at compile time.
    const operationId = route.operation.id as OperationId;
    const reply = await run({ route, input: request, requestId }, (on = handlers) =>
      (on[operationId] as unknown as UntypedHandler)(request),
    );
    if (reply.headers) res.set(reply.headers);
    if (reply.location) res.location(reply.location);
    if (reply.etag) res.setHeader('ETag', reply.etag);
    res.status(reply.status);
    if (reply.body === undefined) res.end();
    else res.json(reply.body);
  };
}
