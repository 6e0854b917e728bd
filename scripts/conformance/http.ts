// Sends one request and keeps everything about it, and renders it as a curl line a person can paste (with the
// API keys as shell variables, never their values) and the response as text for the report.
export interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface Reply {
  /** 0 when no response came (connection refused, reset, timeout). */
  status: number;
  headers: Record<string, string>;
  text: string;
  /** The parsed body, when it is JSON. */
  json?: unknown;
  error?: string;
}

export interface Exchange {
  request: SentRequest;
  reply: Reply;
  /** When the request was sent (ms since the epoch): answers that arrived before it are its past. */
  sentAt?: number;
}

/** A response as the runner keeps it (the body read in full; the tests read a clone of theirs with it). */
export async function replyOf(response: Response): Promise<Reply> {
  const text = await response.text();
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers, text, ...(json !== undefined ? { json } : {}) };
}

/** Methods a client may send again when the connection closed before any answer (RFC 9110 §9.2.1: safe). */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The connection was closed or reset before any answer came: a kept-alive one the server closed as it was reused. */
function closedBeforeAnswer(error: unknown): boolean {
  const code = (error as { cause?: { code?: string } }).cause?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET';
}

export async function send(request: SentRequest, timeoutMs = 15_000): Promise<Exchange> {
  const [exchange, closed] = await sendOnce(request, timeoutMs);
  // A server closes an idle kept-alive connection after its timeout (Node's: 5 s); a request sent on it at that
  // moment gets no answer. A safe request is sent again, once (that connection is gone from the pool).
  if (closed && SAFE.has(request.method)) return (await sendOnce(request, timeoutMs))[0];
  return exchange;
}

/** One attempt, and whether it failed because the connection closed before any answer. */
async function sendOnce(request: SentRequest, timeoutMs: number): Promise<[Exchange, boolean]> {
  const sentAt = Date.now();
  try {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    return [{ request, reply: await replyOf(response), sentAt }, false];
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    const message = `${(error as Error).message}${cause ? `: ${cause}` : ''}`;
    return [
      { request, reply: { status: 0, headers: {}, text: '', error: message }, sentAt },
      closedBeforeAnswer(error),
    ];
  }
}

/** A secret value and the shell variable shown instead of it. */
export type Secret = [value: string, variable: string];

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/** A header holding a secret goes in double quotes, with the secret as "$VARIABLE". */
function quoteHeader(text: string, secrets: Secret[]): string {
  const secret = secrets.find(([value]) => value && text.includes(value));
  if (!secret) return quote(text);
  const escapeShell = (part: string) => part.replace(/[\\"$`]/g, '\\$&');
  return `"${text.split(secret[0]).map(escapeShell).join(`$${secret[1]}`)}"`;
}

export function curlOf(request: SentRequest, secrets: Secret[]): string {
  const parts = ['curl', '-i', '-X', request.method, quote(request.url)];
  for (const [name, value] of Object.entries(request.headers))
    parts.push('-H', quoteHeader(`${name}: ${value}`, secrets));
  // A body padded with a long run of spaces (an oversized-body probe) is written as printf padding it back.
  const padded = request.body === undefined ? null : /^(.*?)( {1024,})$/s.exec(request.body);
  if (padded) parts.push('--data-binary', `"$(printf '%s%*s' ${quote(padded[1] ?? '')} ${padded[2]?.length} '')"`);
  else if (request.body !== undefined) parts.push('--data-binary', quote(request.body));
  return parts.join(' ');
}

const BORING = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

export function describeReply(reply: Reply, secrets: Secret[], limit = 1500): string {
  if (reply.status === 0) return `no response: ${reply.error ?? 'unknown error'}`;
  const headers = Object.entries(reply.headers)
    .filter(([name]) => !BORING.has(name))
    .map(([name, value]) => `${name}: ${value}`);
  const body =
    reply.text.length > limit ? `${reply.text.slice(0, limit)}… (${reply.text.length} characters)` : reply.text;
  const text = [`HTTP ${reply.status}`, ...headers, '', body].join('\n');
  return secrets.reduce((out, [value, variable]) => (value ? out.replaceAll(value, `$${variable}`) : out), text);
}
