// The text report: what was run, a table of subjects (operations, paths, resources) × checks, then every
// distinct failure with its count, the request as a curl line and the response, then the skips and their reasons.
import { curlOf, describeReply, type Secret } from './http.js';
import { CHECKS, type CheckName, type Results, type Tally } from './results.js';

export interface ReportHeader {
  baseUrl: string;
  spec: string;
  seed: number;
  cases: number;
  profile: string;
  stateless?: string;
  interrupted?: string;
  /** Set when the generated cases were sized to the key's quota: what ran of them. */
  sized?: string;
  /** What the key was refused for lack of, when it was (key-scopes.ts): those checks are skipped. */
  narrow?: string;
  durationMs: number;
  leftBehind: number;
  /** Sections after the table (what the run created and removed, coverage over runs, webhooks). */
  sections?: Array<{ title: string; lines: string[] }>;
  /** Table rows in this order (operations in spec order, then paths, then resources); others follow. */
  subjects: string[];
}

const SHORT: Record<CheckName, string> = {
  no_server_error: 'no5xx',
  status_code_documented: 'status',
  content_type_documented: 'ctype',
  response_schema: 'schema',
  response_headers: 'headers',
  invalid_input_rejected: 'invalid',
  not_acceptable: '406',
  body_too_large: '413',
  duplicate_conflict: '409',
  valid_input_accepted: 'valid',
  unknown_id_not_found: 'unknown',
  auth_required: 'auth',
  method_not_allowed: '405',
  created_readable: 'created',
  deleted_gone: 'deleted',
  failed_create_leaves_nothing: 'nothing',
  account_isolation: 'isolation',
  odd_ids: 'oddids',
  huge_integers: 'huge',
  control_characters: 'ctrl',
  absolute_form_target: 'absform',
  duplicate_credentials: 'dupauth',
  scope_enforced: 'scope',
  head_like_get: 'head',
  long_path: 'longpath',
  problem_accept: 'accprob',
  duplicate_idempotency_key: 'dupidem',
  stateful_scenario: 'scenario',
  list_walk: 'walk',
  rate_limit_headers: 'ratelimit',
  rate_limited: '429',
  idempotent_replay: 'replay',
  idempotency_key_reuse: 'keyreuse',
  not_modified: '304',
  precondition_failed: '412',
  webhook_signature: 'whsig',
  webhook_payload: 'whbody',
  webhook_same_id: 'whid',
  webhook_rotation: 'whrot',
};

function cell(tally: Tally | undefined): string {
  if (!tally) return '·';
  const parts = [];
  if (tally.pass || (!tally.fail && !tally.skip)) parts.push(String(tally.pass));
  if (tally.fail) parts.push(`✗${tally.fail}`);
  if (tally.skip) parts.push(`s${tally.skip}`);
  return parts.join(' ');
}

export function summaryTable(results: Results, order: string[] = []): string {
  const checks = CHECKS.filter((check) => [...results.tallies.values()].some((byCheck) => byCheck.has(check)));
  const rank = (subject: string) => (order.includes(subject) ? order.indexOf(subject) : order.length);
  const rows = [...results.tallies.entries()]
    .sort(([a], [b]) => rank(a) - rank(b))
    .map(([subject, byCheck]) => [subject, ...checks.map((c) => cell(byCheck.get(c)))]);
  const header = ['subject', ...checks.map((check) => SHORT[check])];
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((row) => [...(row[i] ?? '')].length)));
  const line = (row: string[]) =>
    row
      .map((text, i) => (i === 0 ? text.padEnd(widths[i] ?? 0) : text.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const legend = checks.map((check) => `${SHORT[check]}=${check}`).join(', ');
  return [line(header), ...rows.map(line), '', `cells: passes, ✗failures, s skips; columns: ${legend}`].join('\n');
}

export function renderReport(results: Results, header: ReportHeader, secrets: Secret[]): string {
  const totals = results.totals();
  const out: string[] = [
    `Conformance of ${header.baseUrl} to ${header.spec}`,
    `seed ${header.seed} (rerun the same requests with --seed ${header.seed}), ${header.cases} generated cases per operation, profile ${header.profile}`,
    `${results.requests} requests in ${(header.durationMs / 1000).toFixed(1)} s`,
  ];
  if (header.sized) out.push(header.sized);
  if (header.narrow) out.push(header.narrow);
  if (header.interrupted) out.push(`INTERRUPTED: ${header.interrupted}`);
  if (header.stateless) out.push(`stateful checks skipped: ${header.stateless}`);
  if (header.leftBehind) out.push(`WARNING: ${header.leftBehind} records the run created could not be deleted`);
  out.push('', summaryTable(results, header.subjects), '');
  for (const section of header.sections ?? []) {
    if (section.lines.length) out.push(section.title, ...section.lines.map((line) => `  ${line}`), '');
  }

  const failures = [...results.failures.values()];
  if (failures.length) {
    out.push(`FAILURES (${failures.length} distinct, ${totals.fail} in all)`, '');
    for (const failure of failures) {
      out.push(`✗ ${failure.subject} · ${failure.check}${failure.count > 1 ? ` (×${failure.count})` : ''}`);
      out.push(`  ${failure.message}`);
      if (failure.detail) out.push(...failure.detail.split('\n').map((l) => `  ${l}`));
      if (failure.exchange) {
        out.push(`  ${curlOf(failure.exchange.request, secrets)}`);
        out.push(
          ...describeReply(failure.exchange.reply, secrets)
            .split('\n')
            .map((l) => `  │ ${l}`),
        );
      }
      out.push('');
    }
  }

  const skips = new Map<string, { check: CheckName; reason: string; subjects: Set<string>; count: number }>();
  for (const skip of results.skips.values()) {
    const key = `${skip.check}\u0000${skip.reason}`;
    const group = skips.get(key) ?? { check: skip.check, reason: skip.reason, subjects: new Set(), count: 0 };
    group.subjects.add(skip.subject);
    group.count += skip.count;
    skips.set(key, group);
  }
  if (skips.size) {
    out.push(`SKIPPED (${totals.skip}; none of these counts as passed)`);
    for (const group of skips.values()) {
      out.push(`- ${group.check} ×${group.count} (${[...group.subjects].join(', ')}): ${group.reason}`);
    }
    out.push('');
  }
  out.push(
    totals.fail
      ? `FAILED: ${totals.fail} checks failed (${failures.length} distinct), ${totals.pass} passed, ${totals.skip} skipped`
      : `PASSED: ${totals.pass} checks passed, ${totals.skip} skipped`,
  );
  return out.join('\n');
}
