// The recommended HAProxy configuration (haproxy.cfg beside this file) rewritten for instances on this machine:
// loopback addresses in its bind and server lines, and for a balancer that does not retry, no retries. The
// topology test and the instances benchmark run it; every line they rewrite must be found, so the file and
// they cannot drift apart.
import { readFileSync } from 'node:fs';

export const RECOMMENDED = new URL('haproxy.cfg', import.meta.url);

export interface LoopbackTopology {
  /** Where clients connect. */
  bind: number;
  /** Its stats page (/stats;csv). */
  stats: number;
  /** Server name (as in the recommended file) to its loopback port; the file's other servers are left out. */
  servers: Record<string, number>;
  /**
   * false: no retries and no watching of live traffic, as a Kubernetes Service or a plain L4 balancer behaves:
   * only its health checks take an instance out.
   */
  retries: boolean;
}

export function haproxyConfig(topology: LoopbackTopology): string {
  let text = readFileSync(RECOMMENDED, 'utf8');
  const replace = (pattern: RegExp, by: string) => {
    if (!pattern.test(text)) throw new Error(`${RECOMMENDED.pathname} has no line matching ${pattern}`);
    text = text.replace(pattern, by);
  };
  replace(/^ {2}bind :8080$/m, `  bind 127.0.0.1:${topology.bind}`);
  replace(/^ {2}bind :8404$/m, `  bind 127.0.0.1:${topology.stats}`);
  for (const [, name] of text.matchAll(/^ {2}server (\S+) .*$/gm)) {
    const port = topology.servers[name as string];
    replace(new RegExp(`^ {2}server ${name} .*\\n`, 'm'), port ? `  server ${name} 127.0.0.1:${port}\n` : '');
  }
  if (!topology.retries) {
    replace(/ observe layer4 error-limit 1 on-error fail-check$/m, '');
    replace(/^ {2}retries \d+$/m, '  retries 0');
    replace(/^ {2}option redispatch.*$/m, '  no option redispatch');
    replace(/^ {2}retry-on .*$/m, '  retry-on none');
  }
  return text;
}
