// The release's name in its three places (test/support/previous-release.ts reads the record): package.json's
// version is the newest release heading of CHANGELOG.md, which keeps an Unreleased section above it, and
// .ci/previous-release names a release the CHANGELOG has.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const headings = [...read('CHANGELOG.md').matchAll(/^## (.+)$/gm)].map((match) => match[1] as string);
const released = headings.flatMap((heading) => /^\[?(\d+\.\d+\.\d+)\]?/.exec(heading)?.[1] ?? []);

describe('the release record', () => {
  it("has package.json's version as the CHANGELOG's newest release, under an Unreleased section", () => {
    expect(headings[0]).toBe('Unreleased');
    expect(JSON.parse(read('package.json')).version).toBe(released[0]);
  });

  it('names in .ci/previous-release a released version and a full commit hash', () => {
    const record = read('.ci/previous-release');
    expect(released).toContain(/^version=(\S+)$/m.exec(record)?.[1]);
    expect(record).toMatch(/^commit=[0-9a-f]{40}$/m);
  });
});
