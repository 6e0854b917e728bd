// The last release (.ci/previous-release: its version and commit) installed from this clone's own git history
// into a folder of its own, for the tests that upgrade from it. Nothing depends on git tags: main's commits carry
// none.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../service/process.js';

export interface Release {
  version: string;
  commit: string;
}

/** The release recorded in .ci/previous-release. */
export function previousRelease(): Release {
  const text = readFileSync(join(ROOT, '.ci/previous-release'), 'utf8');
  const field = (name: string) => new RegExp(`^${name}=(\\S+)$`, 'm').exec(text)?.[1];
  const version = field('version');
  const commit = field('commit');
  if (!version || !commit || !/^[0-9a-f]{40}$/.test(commit)) {
    throw new Error('.ci/previous-release must hold a line version=x.y.z and a line commit=<40 hex digits>');
  }
  return { version, commit };
}

const git = (args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });

/** Whether the release's commit is in this clone's history (a shallow clone may lack it). */
export function inHistory(release: Release): boolean {
  try {
    git(['cat-file', '-e', `${release.commit}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

/** What `npm ci` installs from a package-lock.json: every package, leaving out the project's own version. */
function installedPackages(root: string): string {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  lock.version = undefined;
  if (lock.packages?.['']) lock.packages[''].version = undefined;
  return JSON.stringify(lock);
}

export interface Installed {
  dir: string;
  /** How its packages came: this checkout's node_modules (the same package-lock.json), or its own `npm ci`. */
  packages: 'shared' | 'installed';
  remove(): void;
}

/**
 * The release's files (`git archive` of its commit) in a new temporary folder, with this checkout's node_modules.
 * With `exactPackages` (to run it as the release ran), its own `npm ci --omit=dev` instead when its
 * package-lock.json names other packages than the checkout's (a minute or more: it may compile the SQLite driver).
 */
export function installRelease(release: Release, { exactPackages = false } = {}): Installed {
  if (!inHistory(release)) {
    throw new Error(
      `The previous release's commit ${release.commit} (.ci/previous-release) is not in this clone's history: ` +
        'clone with the full history (a shallow clone: git fetch --unshallow).',
    );
  }
  const dir = mkdtempSync(join(tmpdir(), `dss-release-${release.version}-`));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    const archive = join(dir, 'release.tar');
    git(['archive', '--format=tar', `--output=${archive}`, release.commit]);
    execFileSync('tar', ['-xf', archive, '-C', dir]);
    rmSync(archive);
    if (!exactPackages || installedPackages(dir) === installedPackages(ROOT)) {
      symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(dir, 'node_modules'));
      return { dir, packages: 'shared', remove };
    }
    // As the release's image installs it (its Dockerfile's `npm ci --omit=dev`): the runtime packages only.
    execFileSync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'pipe', timeout: 600_000 });
    return { dir, packages: 'installed', remove };
  } catch (error) {
    remove();
    throw error;
  }
}
