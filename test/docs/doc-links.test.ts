// The documents a newcomer reads: every relative link resolves to a file of the repository (and a heading of it,
// when it names one), and the README's two commands stay at its top, the test one as CI runs it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';

const root = join(import.meta.dirname, '../..');

const DOCUMENTS = [
  'README.md',
  'spec/GUIDE.md',
  'scripts/deploy/OPERATIONS.md',
  'scripts/conformance/README.md',
  'scripts/bench/README.md',
  'server/ARCHITECTURE.md',
  'client/README.md',
  'CHANGELOG.md',
  'CONTRIBUTING.md',
];

/** Markdown's text outside fenced code blocks and inline code, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^ *(```|~~~)[^\n]*\n[\s\S]*?^ *\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Every `[text](target)` of a document's prose, without the titles a link may carry. */
function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] as string);
}

/** The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces as `-`, repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = (heading as string).replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\p{Pc}\s-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Headings are read from the text with its inline code kept, so anchors need the unstripped headings. */
function anchorsOf(file: string): Set<string> {
  const markdown = readFileSync(file, 'utf8').replace(/^ *(```|~~~)[^\n]*\n[\s\S]*?^ *\1[^\n]*$/gm, '');
  return headingAnchors(markdown.replace(/`([^`\n]*)`/g, '$1'));
}

function brokenLinks(document: string): string[] {
  const file = join(root, document);
  const broken: string[] = [];
  for (const target of linkTargets(readFileSync(file, 'utf8'))) {
    if (/^[a-z][a-z+.-]*:/i.test(target)) continue;
    const [path, anchor] = target.split('#', 2) as [string, string | undefined];
    const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path));
    if (!resolved.startsWith(root) || !existsSync(resolved)) {
      broken.push(`${target}: no file ${relative(root, resolved)}`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
      broken.push(`${target}: an anchor on a file that is not Markdown`);
    } else if (!anchorsOf(resolved).has(anchor)) {
      broken.push(`${target}: no heading "${anchor}" in ${relative(root, resolved)}`);
    }
  }
  return broken;
}

/**
 * Paths the documents name in backticks that are not in the repository on purpose: an example of a recipe, and
 * what a build makes.
 */
const NOT_FILES: Record<string, string> = {
  'server/tags/': 'the folder of the example resource in "Adding a resource"',
  'client/dist/': 'what `npm run build:client` makes (not committed)',
};

/** The folders a path in backticks may start with: the repository's own (server/…), or, in ARCHITECTURE, server's. */
const ROOTS = ['server', 'scripts', 'test', 'client', 'spec'];

/**
 * Every path of the repository a document names in backticks (`server/…`, `scripts/…`, `test/…`, `client/…`,
 * `spec/…`, and in server/ARCHITECTURE.md also `webhooks/…` below server/) that does not exist: a file moved
 * or gone that the words still describe. Globs and placeholders (`*`, `{`, `<`) are patterns, not files.
 */
function missingPaths(document: string): string[] {
  const markdown = readFileSync(join(root, document), 'utf8');
  const inServer = document === 'server/ARCHITECTURE.md';
  const serverFolders = new Set(
    readdirSync(join(root, 'server'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name),
  );
  const missing: string[] = [];
  for (const [, named] of markdown.matchAll(/`([a-z][\w.-]*\/[^`\s]*)`/g)) {
    const path = (named as string).replace(/[.,;:)]+$/, '');
    if (/[*{<]/.test(path) || path in NOT_FILES) continue;
    const first = path.split('/')[0] as string;
    const candidates = [
      ...(ROOTS.includes(first) ? [join(root, path)] : []),
      ...(inServer && serverFolders.has(first) ? [join(root, 'server', path)] : []),
    ];
    if (candidates.length > 0 && !candidates.some((candidate) => existsSync(candidate))) missing.push(path);
  }
  return [...new Set(missing)];
}

describe('the documents', () => {
  test.each(DOCUMENTS)('every relative link of %s resolves', (document) => {
    expect(brokenLinks(document)).toEqual([]);
  });

  test.each(DOCUMENTS)('every file %s names in backticks exists', (document) => {
    expect(missingPaths(document)).toEqual([]);
  });

  test('the link check finds a missing file and a missing heading', () => {
    expect(linkTargets('[a](x.md#y) `[b](no.md)`\n```\n[c](no.md)\n```\n[d](https://e.example)')).toEqual([
      'x.md#y',
      'https://e.example',
    ]);
    expect([
      ...headingAnchors('# TLS at the load balancer, and TRUST_PROXY\n## Node.js versions\n## Node.js versions'),
    ]).toEqual(['tls-at-the-load-balancer-and-trust_proxy', 'nodejs-versions', 'nodejs-versions-1']);
  });

  test('the README opens with the two commands, and CI runs its test command verbatim', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const commands = firstBlock.split('\n').map((line) => line.replace(/\s+#.*$/, '').trim());
    expect(commands.slice(0, 2)).toEqual(['npm ci && npm start', 'npm ci && npm test']);
    expect(readme.indexOf(firstBlock)).toBeLessThan(1500);
    const ci = readFileSync(join(root, '.ci/run'), 'utf8');
    expect(ci.split('\n')).toContain(commands[1]);
  });
});
