// Clients looping reads and creates through a load balancer, every request's outcome kept: when it was sent and
// answered, its status or error, and for a create the name sent and the id acknowledged.
export type Kind = 'create' | 'keyed-create' | 'show' | 'list';

export interface Outcome {
  kind: Kind;
  sentAt: number;
  doneAt: number;
  status?: number;
  error?: string;
  /** Creates: the unique name sent, the id of a 201, and whether it was a replay of an Idempotency-Key. */
  name?: string;
  id?: number;
  replayed?: boolean;
}

/**
 * What each client waits between its requests, as a client does between actions. Unpaced, the clients took every
 * core of the 2-core CI machine for as long as they ran (16 of them: 12,535 requests in a 37 s rolling restart,
 * the service instances' starts slowed by as much); paced, the load is bounded and requests are still in flight
 * through every drain, restart and kill (16 clients: one sent every few ms on average).
 */
export const THINK_MS = 50;
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const EXPECTED: Record<Kind, number> = { create: 201, 'keyed-create': 201, show: 200, list: 200 };

export const failed = (outcome: Outcome) => outcome.status !== EXPECTED[outcome.kind];

export interface LoadOptions {
  /** The API's base URL through the balancer. */
  api: string;
  /** API keys, spread over the clients. */
  keys: string[];
  clients: number;
  /** Names start with it, so that a run's records are told from any other's. */
  tag: string;
  /** Every other create carries an Idempotency-Key. */
  keyedCreates: boolean;
}

/** Each client in turn: a create, a show of its last record, a list. */
function startLoad(options: LoadOptions): { stop(): Promise<Outcome[]> } {
  const outcomes: Outcome[] = [];
  let stopping = false;
  const loop = async (client: number) => {
    const key = options.keys[client % options.keys.length] as string;
    let lastId: number | undefined;
    for (let n = 0; !stopping; n++) {
      if (n > 0) await pause(THINK_MS);
      if (stopping) break;
      const step = n % 3;
      const keyed = options.keyedCreates && n % 6 === 3;
      const kind: Kind =
        step === 0 || lastId === undefined ? (keyed ? 'keyed-create' : 'create') : step === 1 ? 'show' : 'list';
      const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
      const name = `${options.tag}-${client}-${n}`;
      let url = `${options.api}/spaces`;
      let body: string | undefined;
      if (kind === 'create' || kind === 'keyed-create') {
        headers['Content-Type'] = 'application/x-www-form-urlencoded';
        if (kind === 'keyed-create') headers['Idempotency-Key'] = `${name}-key`;
        body = new URLSearchParams({ name, color: String((n % 6) + 1) }).toString();
      } else if (kind === 'show') {
        url = `${options.api}/spaces/${lastId}`;
      } else {
        url = `${options.api}/spaces?per_page=10&sort_by=id&sort=desc`;
      }
      const outcome: Outcome = { kind, sentAt: Date.now(), doneAt: 0, ...(body ? { name } : {}) };
      try {
        const response = await fetch(url, {
          method: body ? 'POST' : 'GET',
          headers,
          body,
          signal: AbortSignal.timeout(20_000),
        });
        const text = await response.text();
        outcome.status = response.status;
        if (body && response.status === 201) {
          outcome.id = (JSON.parse(text) as { data: { id: number } }).data.id;
          outcome.replayed = response.headers.get('idempotent-replayed') === 'true';
          lastId = outcome.id;
        }
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause;
        outcome.error = cause?.code ?? (error as Error).message;
      }
      outcome.doneAt = Date.now();
      outcomes.push(outcome);
    }
  };
  const loops = Array.from({ length: options.clients }, (_, client) => loop(client));
  return {
    async stop() {
      stopping = true;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

/** Requests and failures per kind, for the test's report line. */
export function summary(outcomes: Outcome[]): Record<string, { requests: number; failed: number }> {
  const byKind: Record<string, { requests: number; failed: number }> = {};
  for (const outcome of outcomes) {
    byKind[outcome.kind] ??= { requests: 0, failed: 0 };
    const entry = byKind[outcome.kind] as { requests: number; failed: number };
    entry.requests++;
    if (failed(outcome)) entry.failed++;
  }
  return byKind;
}

/** Runs `during` while the clients loop; they stop when it ends, also when it throws. */
export async function underLoad<T>(
  options: LoadOptions,
  during: () => Promise<T>,
): Promise<{ outcomes: Outcome[]; result: T }> {
  const load = startLoad(options);
  try {
    const result = await during();
    return { outcomes: await load.stop(), result };
  } finally {
    await load.stop();
  }
}
