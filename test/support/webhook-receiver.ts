// A real HTTP receiver for webhook deliveries, on 127.0.0.1 port 0: answers each request with the next scripted
// answer (a status, headers, a delay or a promise before answering, a body sent slowly), 200 once the script is spent, and
// keeps every request it received.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  /** Wait this long before answering (a timeout, when longer than the attempt's limit). */
  delayMs?: number;
  /** Answer only once this has settled (then after `delayMs`, if any): the test decides when. */
  after?: Promise<unknown>;
  /** Send the body in these pieces, this long apart (a slow body). */
  slowBody?: { pieces: number; everyMs: number };
  body?: string;
}

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** The answer this request was given (or was to be given). */
  answer: Answer;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Answers for the next requests, in order. */
  script(...answers: Answer[]): void;
  /** Resolves once `predicate` holds on the requests received, polling; rejects after `timeoutMs`. */
  until(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<Received[]>;
  /**
   * Resolves once nothing has arrived for `quietMs` (longer than a retry takes to come), so that an "exactly once"
   * check also sees a late duplicate; rejects when requests keep coming for `timeoutMs`.
   */
  quiet(quietMs: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(path = '/hooks'): Promise<Receiver> {
  const received: Received[] = [];
  const answers: Answer[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };
  const answer = (res: ServerResponse, { status = 200, headers = {}, slowBody, body = 'ok' }: Answer) => {
    res.writeHead(status, { 'content-type': 'text/plain', ...headers });
    if (!slowBody) return res.end(body);
    let sent = 0;
    const next = () => {
      if (res.destroyed) return;
      if (++sent >= slowBody.pieces) return res.end(body);
      res.write('.');
      later(slowBody.everyMs, next);
    };
    next();
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const scripted = answers.shift() ?? {};
      received.push({
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
        answer: scripted,
      });
      const respond = () => {
        if (scripted.delayMs) later(scripted.delayMs, () => answer(res, scripted));
        else answer(res, scripted);
      };
      if (scripted.after) void scripted.after.finally(respond);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    script: (...more) => answers.push(...more),
    async until(predicate, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) {
          throw new Error(`the receiver did not get what was expected in ${timeoutMs} ms (got ${received.length})`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return received;
    },
    async quiet(quietMs, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const last = received.at(-1)?.at ?? 0;
        const still = last + quietMs - Date.now();
        if (still <= 0) return received;
        if (Date.now() + still > deadline) {
          throw new Error(`the receiver kept getting requests for ${timeoutMs} ms (got ${received.length})`);
        }
        await new Promise((resolve) => setTimeout(resolve, still));
      }
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
