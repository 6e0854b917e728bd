// Which scripts of the docs page its Content-Security-Policy lets run: each inline script by the SHA-256 of its
// bytes, read from the page's bytes (http/pages/docs.ts).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inlineScriptHashes } from '../../server/http/pages/docs.js';

const sha = (text: string) => createHash('sha256').update(text).digest('base64');

describe('inlineScriptHashes', () => {
  it.each([
    ['a plain script', '<script>run()</script>', [sha('run()')]],
    ['one with attributes', '<script defer type="module">run()</script>', [sha('run()')]],
    ['tags in upper or mixed case', '<SCRIPT>a()</Script><sCrIpT\n>b()</SCRIPT>', [sha('a()'), sha('b()')]],
    ['text beyond ASCII, hashed as UTF-8', '<script>say("naïve — ✓")</script>', [sha('say("naïve — ✓")')]],
    ['an empty script', '<script></script>', [sha('')]],
    ['two scripts in order', '<p>x</p><script>one()</script><p><script>two()</script>', [sha('one()'), sha('two()')]],
  ])('hashes %s', (_what, page, expected) => {
    expect(inlineScriptHashes(page)).toEqual(expected);
    expect(inlineScriptHashes(Buffer.from(page))).toEqual(expected);
  });

  it.each([
    ['a JSON data block', '<script type="application/json" id="c">{"a":1}</script>'],
    ['a script loaded from a URL', '<script src="/x.js"></script>'],
    ['another element whose name starts with "script"', '<scripts>no()</scripts><script-x>no()</script-x>'],
    ['a script never closed', '<script>no()'],
    ['no script at all', '<p>a &lt; b</p>'],
  ])('runs nothing for %s', (_what, page) => {
    expect(inlineScriptHashes(page)).toEqual([]);
  });
});
