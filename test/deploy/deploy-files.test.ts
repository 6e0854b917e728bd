// The deployment files agree with each other and with the service: compose.yaml runs the image the Dockerfile
// builds behind the HAProxy configuration the topology test proves, every supervisor runs the same command and
// waits longer than a drain takes, and the balancer trusts nobody else's X-Forwarded-For.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULTS } from '../../server/config.js';
import { shutdownBudgetMs } from '../../server/lifecycle.js';
import { ROOT } from '../service/process.js';
import { argsOf, envOf, execForm, readDockerfile } from './dockerfile.js';

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const final = readDockerfile(ROOT).at(-1) ?? { instructions: [] };
const command = execForm(argsOf(final, 'CMD')[0] ?? '');
const compose = parse(read('compose.yaml'), { merge: true }) as {
  services: Record<
    string,
    {
      build?: string;
      environment?: Record<string, string>;
      stop_grace_period?: string;
      volumes?: string[];
      networks?: Record<string, { ipv4_address?: string }> | string[];
    }
  >;
};
const haproxy = read('scripts/deploy/haproxy.cfg');
const unit = read('scripts/deploy/domain-space-service.service');
const seconds = (text = '') => Number(/^(\d+)s$/.exec(text)?.[1] ?? Number.NaN);
const instances = Object.entries(compose.services).filter(([, service]) => service.build === '.');

describe('deployment files', () => {
  it('balance three instances of the image, by the names and port the HAProxy configuration uses', () => {
    expect(instances.map(([name]) => name)).toEqual(['dss1', 'dss2', 'dss3']);
    const servers = [...haproxy.matchAll(/^ {2}server (\S+) (\S+):(\d+)/gm)].map(([, name, host, port]) => ({
      name,
      host,
      port,
    }));
    expect(servers).toEqual(instances.map(([name]) => ({ name, host: name, port: envOf(final).PORT })));
    expect(compose.services.haproxy?.volumes).toContain(
      './scripts/deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro',
    );
  });

  it('give every drain the time it takes before a supervisor kills it (background work stops within it)', () => {
    const drain = (env: Record<string, string> = {}) =>
      shutdownBudgetMs({
        drainDelayMs: Number(env.DRAIN_DELAY_S ?? DEFAULTS.DRAIN_DELAY_S) * 1000,
        shutdownGraceMs: Number(env.SHUTDOWN_GRACE_S ?? DEFAULTS.SHUTDOWN_GRACE_S) * 1000,
      }) / 1000;
    for (const [, service] of instances) {
      expect(seconds(service.stop_grace_period)).toBeGreaterThan(drain(service.environment));
    }
    expect(Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1])).toBeGreaterThan(drain());
    expect(argsOf(final, 'STOPSIGNAL')).toEqual(['SIGTERM']);
    expect(unit).toMatch(/^KillSignal=SIGTERM$/m);
  });

  it('run node with the same script, heap and malloc settings everywhere, as npm start does (signals reach the service)', () => {
    const npmStart = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start.split(' ');
    const node = npmStart.indexOf('node');
    expect(npmStart.slice(0, 2)).toEqual(['exec', 'env']);
    expect(command).toEqual(npmStart.slice(node));
    expect(command.at(-1)).toBe('scripts/start.mjs');
    expect(command).toEqual(expect.arrayContaining(['--max-semi-space-size=4', '--heap-growing-percent=50']));
    expect(/^ExecStart=(.*)$/m.exec(unit)?.[1]).toBe(`/usr/bin/node ${command.slice(1).join(' ')}`);
    // glibc's malloc settings: npm start's environment, the image's ENV and the unit's Environment= alike.
    const malloc = Object.fromEntries(npmStart.slice(2, node).map((word) => word.split('=') as [string, string]));
    expect(malloc).toEqual({
      MALLOC_ARENA_MAX: '2',
      MALLOC_MMAP_THRESHOLD_: '1048576',
      MALLOC_TRIM_THRESHOLD_: '1048576',
    });
    expect(envOf(final)).toMatchObject(malloc);
    const unitEnv = [...unit.matchAll(/^Environment=(.*)$/gm)].flatMap(([, words]) => (words as string).split(' '));
    expect(Object.fromEntries(unitEnv.map((word) => word.split('=') as [string, string]))).toMatchObject(malloc);
  });

  it('trust X-Forwarded-For from the balancer alone', () => {
    const networks = compose.services.haproxy?.networks as Record<string, { ipv4_address?: string }>;
    const balancer = Object.values(networks)[0]?.ipv4_address;
    expect(balancer).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    for (const [, service] of instances) expect(service.environment?.TRUST_PROXY).toBe(balancer);
    expect(haproxy).toMatch(/^ {2}option forwardfor$/m);
  });
});
