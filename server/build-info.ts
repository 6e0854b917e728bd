// Which release runs: the version of package.json and the commit it was built from, for the start log line,
// /healthz and the dss_build_info metric. The commit is DSS_COMMIT when set (an image or a package built without
// .git), else read from the checkout's .git (a worktree's too) without running git, else "unknown".
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BuildInfo {
  version: string;
  commit: string;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (file: string) => readFileSync(file, 'utf8').trim();

/** The commit HEAD names in the git directory `gitDir` (a branch, packed or not, or a detached HEAD). */
function headCommit(gitDir: string): string | undefined {
  const head = read(join(gitDir, 'HEAD'));
  if (/^[0-9a-f]{40}$/.test(head)) return head;
  const ref = /^ref: (\S+)$/.exec(head)?.[1];
  if (!ref) return undefined;
  // A worktree keeps its HEAD, and the repository's refs are in the common directory.
  let common = gitDir;
  try {
    common = resolve(gitDir, read(join(gitDir, 'commondir')));
  } catch {}
  for (const dir of [gitDir, common]) {
    try {
      return read(join(dir, ref));
    } catch {}
  }
  const packed = read(join(common, 'packed-refs'))
    .split('\n')
    .find((line) => line.endsWith(` ${ref}`));
  return packed?.split(' ')[0];
}

function commitOf(root: string): string {
  try {
    let gitDir = join(root, '.git');
    try {
      // A worktree's or a submodule's .git is a file naming the git directory.
      gitDir = resolve(root, /^gitdir: (.+)$/m.exec(read(gitDir))?.[1] ?? gitDir);
    } catch {}
    return headCommit(gitDir) ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

let cached: BuildInfo | undefined;

export function buildInfo(env: NodeJS.ProcessEnv = process.env): BuildInfo {
  cached ??= {
    version: (JSON.parse(read(join(ROOT, 'package.json'))) as { version: string }).version,
    commit: env.DSS_COMMIT?.trim() || commitOf(ROOT),
  };
  return cached;
}
