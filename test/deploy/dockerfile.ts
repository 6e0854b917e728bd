// The Dockerfile read as its instructions, stage by stage, so that a test can do what a stage does (its COPY
// and RUN lines) and start the result with the final stage's ENV and CMD. Only the forms our Dockerfile uses.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Instruction {
  op: string;
  /** The rest of the line, continuations joined. */
  args: string;
}

export interface Stage {
  name?: string;
  instructions: Instruction[];
}

export function readDockerfile(root: string): Stage[] {
  const text = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (op.toUpperCase() === 'FROM') stages.push({ name: /\bAS\s+(\S+)/i.exec(args)?.[1], instructions: [] });
    else stages.at(-1)?.instructions.push({ op: op.toUpperCase(), args: args.trim() });
  }
  return stages;
}

export const argsOf = (stage: Stage, op: string) =>
  stage.instructions.filter((instruction) => instruction.op === op).map((instruction) => instruction.args);

/** A RUN line's shell command, without BuildKit's flags (--mount=…), which change where npm keeps its cache. */
export const shellCommand = (run: string) => run.replace(/^(--\S+\s+)+/, '');

/** `COPY a b dest`: the sources and the destination; undefined for a copy from another stage. */
export function copySources(args: string): { sources: string[]; destination: string } | undefined {
  if (args.startsWith('--from')) return undefined;
  const words = args.split(/\s+/).filter((word) => !word.startsWith('--'));
  return { sources: words.slice(0, -1), destination: words.at(-1) as string };
}

/** ENV lines as a map (`ENV A=1 B=2`). */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const args of argsOf(stage, 'ENV')) {
    for (const [, name, value] of args.matchAll(/(\w+)=("[^"]*"|\S*)/g)) {
      env[name as string] = (value as string).replace(/^"|"$/g, '');
    }
  }
  return env;
}

/** The exec form of CMD or HEALTHCHECK's CMD, as an argument list. */
export function execForm(args: string): string[] {
  const json = /\[.*\]$/.exec(args)?.[0];
  if (!json) throw new Error(`not in exec form: ${args}`);
  return JSON.parse(json) as string[];
}
