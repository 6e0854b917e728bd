// JUnit XML for CI dashboards: one testsuite per subject (operation, path or resource), one testcase per check;
// a failure carries every distinct message with its curl line and response.
import { curlOf, describeReply, type Secret } from './http.js';
import type { Results } from './results.js';

const xml = (text: string) =>
  text
    // XML 1.0 cannot carry most control characters even escaped.
    .replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');

export function renderJunit(results: Results, secrets: Secret[], durationMs: number): string {
  const totals = results.totals();
  const suites: string[] = [];
  let tests = 0;
  for (const [subject, byCheck] of results.tallies) {
    const cases: string[] = [];
    let failed = 0;
    let skipped = 0;
    for (const [check, tally] of byCheck) {
      const name = `name="${xml(check)}" classname="${xml(subject)}"`;
      if (tally.fail) {
        failed++;
        const found = [...results.failures.values()].filter((f) => f.subject === subject && f.check === check);
        const detail = found
          .map((f) =>
            [
              `${f.message}${f.count > 1 ? ` (×${f.count})` : ''}`,
              ...(f.detail ? [f.detail] : []),
              ...(f.exchange ? [curlOf(f.exchange.request, secrets), describeReply(f.exchange.reply, secrets)] : []),
            ].join('\n'),
          )
          .join('\n\n');
        const message = `${tally.fail} failed, ${tally.pass} passed: ${found[0]?.message ?? ''}`;
        cases.push(
          `    <testcase ${name}>\n      <failure message="${xml(message)}" type="${xml(check)}">${xml(detail)}</failure>\n    </testcase>`,
        );
      } else if (tally.skip && !tally.pass) {
        skipped++;
        const reasons = [...results.skips.values()].filter((s) => s.subject === subject && s.check === check);
        cases.push(
          `    <testcase ${name}>\n      <skipped message="${xml(reasons.map((r) => r.reason).join('; '))}"/>\n    </testcase>`,
        );
      } else {
        cases.push(`    <testcase ${name}/>`);
      }
    }
    tests += cases.length;
    suites.push(
      `  <testsuite name="${xml(subject)}" tests="${cases.length}" failures="${failed}" skipped="${skipped}" errors="0">\n${cases.join('\n')}\n  </testsuite>`,
    );
  }
  const failures = [...results.tallies.values()].reduce(
    (sum, byCheck) => sum + [...byCheck.values()].filter((t) => t.fail).length,
    0,
  );
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="conformance" tests="${tests}" failures="${failures}" errors="0" time="${(durationMs / 1000).toFixed(3)}">`,
    `  <!-- ${totals.pass} checks passed, ${totals.fail} failed, ${totals.skip} skipped -->`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
