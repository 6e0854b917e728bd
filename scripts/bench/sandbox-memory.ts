// `npm run bench:sandbox-memory`: the sandbox's memory under many new keys. Starts `npm run sandbox` on
// 127.0.0.1 (limits off), sends one request with a new key each (KEYS, default 20,000; 8 at a time), half of
// them a valid list and half an invalid create (422), and prints the process's RSS before, along the way and
// after, and how many keys were answered with what.
import { freePort, rssMb, spawnChild, stopAllChildren, waitForHttp } from './children.js';
import { npmScript } from './targets.js';

const KEYS = Number(process.env.KEYS ?? 20_000);
const CONCURRENCY = 8;

async function main(): Promise<void> {
  try {
    const port = await freePort();
    const sandbox = npmScript('sandbox');
    const child = spawnChild(process.execPath, sandbox.args, {
      ...sandbox.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      RATE_LIMIT: 'off',
      AUTH_FAILURE_LIMIT: 'off',
      LOG_LEVEL: 'silent',
      DSS_BUILD_DOCS: '0',
    });
    await waitForHttp(`http://127.0.0.1:${port}/readyz`, performance.now(), 200);
    const api = `http://127.0.0.1:${port}/api/v1`;
    const statuses = new Map<number, number>();
    const send = async (index: number) => {
      const key = `dss_memory_${index.toString(36)}_${process.pid}`;
      const init: RequestInit =
        index % 2 === 0
          ? { headers: { Authorization: `Bearer ${key}` } }
          : {
              method: 'POST',
              headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/x-www-form-urlencoded' },
              body: 'color=9',
            };
      const answer = await fetch(`${api}/${index % 4 < 2 ? 'spaces' : 'domains'}`, init);
      await answer.arrayBuffer();
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    };
    // A few requests first, so that "before" is a warm process.
    for (let i = 0; i < 20; i++) await send(KEYS + i);
    const before = await rssMb(child.pid);
    console.log(`RSS before: ${before} MB`);
    let next = 0;
    const started = performance.now();
    const worker = async () => {
      while (next < KEYS) {
        const index = next++;
        await send(index);
        if ((index + 1) % 5000 === 0) console.log(`  ${index + 1} keys: RSS ${await rssMb(child.pid)} MB`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (performance.now() - started) / 1000;
    const after = await rssMb(child.pid);
    console.log(`RSS after ${KEYS} new keys: ${after} MB (${seconds.toFixed(1)} s)`);
    console.log(`answers: ${[...statuses].map(([status, count]) => `${count} × ${status}`).join(', ')}`);
  } finally {
    await stopAllChildren();
  }
}

await main();
