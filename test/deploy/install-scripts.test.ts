// `npm ci` reviews install scripts against package.json's allowScripts and lists every package it finds no entry
// for: each dependency with an install script (the lockfile's `hasInstallScript`) has one, allowed or denied, so
// the install ends without that warning. Scarf's install analytics are off for this project.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';

const root = join(import.meta.dirname, '../..');
const read = (file: string) => JSON.parse(readFileSync(join(root, file), 'utf8'));

/** The installed names (aliases as installed) of the lockfile's packages that have install scripts. */
function withInstallScripts(lock: { packages: Record<string, { hasInstallScript?: boolean }> }): string[] {
  const names = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript === true)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  return [...new Set(names)].sort();
}

test('the lockfile names its packages with install scripts, aliases and nested copies too', () => {
  const lock = {
    packages: {
      '': {},
      'node_modules/esbuild': { hasInstallScript: true },
      'node_modules/a/node_modules/@scope/b': { hasInstallScript: true },
      'node_modules/@scope/b': { hasInstallScript: true },
      'node_modules/plain': {},
    },
  };
  expect(withInstallScripts(lock)).toEqual(['@scope/b', 'esbuild']);
});

test('every dependency with an install script is allowed or denied in allowScripts', () => {
  const { allowScripts = {} } = read('package.json') as { allowScripts?: Record<string, boolean> };
  const unreviewed = withInstallScripts(read('package-lock.json')).filter((name) => !(name in allowScripts));
  expect(unreviewed).toEqual([]);
});

test("Scarf's install analytics are turned off", () => {
  expect(read('package.json').scarfSettings).toEqual({ enabled: false });
});
