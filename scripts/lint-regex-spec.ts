// The ReDoS check of `npm run lint:regex` for the spec's own patterns: the validator runs each `pattern` of
// generated/openapi.json on request input, so each goes through the same eslint-plugin-regexp rules as the code
// (eslint.config.mjs), written out as `new RegExp(<pattern>, 'u')` lines, the flag JSON Schema patterns use.
import { readFileSync } from 'node:fs';
import { ESLint } from 'eslint';

const SPEC = new URL('../generated/openapi.json', import.meta.url);

function patternsOf(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) patternsOf(item, found);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' && typeof value === 'string') found.add(value);
      else patternsOf(value, found);
    }
  }
  return found;
}

const patterns = [...patternsOf(JSON.parse(readFileSync(SPEC, 'utf8')))];
const source = patterns.map((pattern) => `new RegExp(${JSON.stringify(pattern)}, 'u');`).join('\n');
const [result] = await new ESLint().lintText(source, { filePath: 'server/spec-patterns.ts' });
const problems = result?.messages ?? [];
for (const problem of problems) {
  console.error(`spec pattern ${patterns[problem.line - 1]}: ${problem.message} (${problem.ruleId})`);
}
if (problems.length > 0) process.exit(1);
console.log(`${patterns.length} spec patterns checked: none can backtrack super-linearly.`);
