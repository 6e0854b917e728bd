// The Node.js major versions CI runs the whole test suite on (keep in step with package.json "engines",
// .ci/run and the README). `npm start` refuses any other: an untested runtime can fail in ways no test saw
// (Node 24.19+ aborted better-sqlite3 12 at the first idle GC). DSS_ALLOW_UNTESTED_NODE=1 starts it anyway.
export const TESTED_NODE_MAJORS = [20, 24] as const;

/** A message when `version` (like "v24.21.0") is not a tested major: an error, or a warning if allowed. */
export function checkNodeVersion(
  version: string,
  env: NodeJS.ProcessEnv,
): { level: 'error' | 'warning'; message: string } | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if ((TESTED_NODE_MAJORS as readonly number[]).includes(major)) return undefined;
  const tested = TESTED_NODE_MAJORS.map((m) => `${m}.x`).join(' and ');
  if (env.DSS_ALLOW_UNTESTED_NODE === '1') {
    return {
      level: 'warning',
      message: `warning: Node.js ${version} is untested (tested: ${tested}); starting anyway`,
    };
  }
  return {
    level: 'error',
    message:
      `domain-space-service is tested on Node.js ${tested}, not ${version}. ` +
      'Run it with Node.js 24 (see the README), or set DSS_ALLOW_UNTESTED_NODE=1 to start anyway.',
  };
}

/** Exits with the message on an untested Node.js; prints a warning when that is allowed. */
export function requireTestedNode(version = process.version, env = process.env): void {
  const problem = checkNodeVersion(version, env);
  if (!problem) return;
  console.error(problem.message);
  if (problem.level === 'error') process.exit(1);
}
