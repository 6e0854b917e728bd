// Debian packages the suites install themselves when missing (CI runs as root on a fresh machine): HAProxy, Knot.
// Installed without starting their system services: Debian starts a package's service at install unless
// /usr/sbin/policy-rc.d says no, and the suites start these programs themselves, on loopback, and stop them by PID
// (a service started by the install would be left running after the tests).
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';

const POLICY = '/usr/sbin/policy-rc.d';

/** `apt-get install` of the packages, their services not started; with an index update first when `update`. */
export function aptInstall(packages: string[], { update = false, recommends = true } = {}): void {
  const apt = (args: string[]) =>
    execFileSync('apt-get', args, {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: 'ignore',
      timeout: 240_000,
    });
  // 101: "action not allowed" (invoke-rc.d's policy interface); left alone when the machine has its own policy.
  const own = !existsSync(POLICY);
  if (own) writeFileSync(POLICY, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  try {
    if (update) apt(['update', '-qq']);
    apt(['install', '-y', '-qq', ...(recommends ? [] : ['--no-install-recommends']), ...packages]);
  } finally {
    if (own) rmSync(POLICY, { force: true });
  }
}
