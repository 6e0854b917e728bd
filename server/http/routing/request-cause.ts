// The request behind a change, as the event log records it (server/events/outbox.ts).
import type { ChangeCause } from '../../db/owned.js';

export function causeOf(requestId: string, idempotencyKey?: string): ChangeCause {
  return { requestId, idempotencyKey: idempotencyKey ?? null };
}
