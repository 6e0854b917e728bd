// Bytes on a socket, for requests no HTTP client will send (two Authorization headers, an absolute-form
// target, a malformed request line) and the one answer that comes back, read by hand.
import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
}

/** Sends `text` to the origin and reads one answer (up to its Content-Length, or until the server closes). */
export function sendRaw(origin: string, text: string, timeoutMs = 10_000): Promise<RawAnswer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(text));
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms; got: ${received.toString('latin1')}`));
    }, timeoutMs);
    const finish = () => {
      const parsed = parseAnswer(received);
      if (!parsed) return false;
      clearTimeout(timer);
      socket.destroy();
      resolve(parsed);
      return true;
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      finish();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (!finish()) {
        clearTimeout(timer);
        reject(new Error(`closed without a complete answer; got: ${received.toString('latin1')}`));
      }
    });
  });
}

function parseAnswer(bytes: Buffer): RawAnswer | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
    }),
  );
  const body = bytes.subarray(end + 4);
  const length = Number(headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(length) && body.length < length) return undefined;
  return { status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8') };
}
