// The container's health check (Dockerfile HEALTHCHECK): exit 0 when the service on this machine answers
// /healthz with 200 within 2 s, else 1. Liveness only: a database outage makes /readyz 503, not this.
const host = ['', '0.0.0.0', '::'].includes(process.env.HOST ?? '') ? '127.0.0.1' : process.env.HOST;
const url = `http://${host.includes(':') ? `[${host}]` : host}:${process.env.PORT || 3000}/healthz`;
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
  process.exit(response.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
