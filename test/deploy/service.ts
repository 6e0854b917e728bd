// The service as npm start runs it (test/service/process.ts), on a port chosen in advance, ready once its
// /readyz answers 200: how a load balancer or a deploy script sees it, whatever it prints. `root`: another
// install's (a previous release's) instead of this checkout's.
import { join } from 'node:path';
import { ROOT, type Running, runScript, SERVICE } from '../service/process.js';

export const origin = (port: number) => `http://127.0.0.1:${port}`;

export async function startReady(port: number, env: Record<string, string>, root = ROOT): Promise<Running> {
  const service = runScript(join(root, SERVICE), [], { HOST: '127.0.0.1', ...env, PORT: String(port) }, { cwd: root });
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
    if (service.child.exitCode !== null) break;
    const ready = await fetch(`${origin(port)}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return service;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await service.stop('SIGKILL', 5_000).catch(() => {});
  throw new Error(`the service on port ${port} did not become ready:\n${service.stdout()}\n${service.stderr()}`);
}
