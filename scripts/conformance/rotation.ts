// Coverage over time, for probes the deployment's budgets cannot take all at once in one run: the credential
// probes (the address's failed-authentication budget) and, when the key's quota is tight, the per-operation
// probe families (odd ids, methods, …). Each run sends the next slice of a family, so that runs one after
// another cover all of it; the report says what this run probed and what the runs so far did. The state (how
// many runs, which probes were sent) is kept in a file per base URL (--state, default under
// $XDG_STATE_HOME); without one, the slice follows the seed.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { CheckName, Results } from './results.js';

interface Family {
  total: number;
  /** Probed this run. */
  now: Set<string>;
  /** Probed by earlier runs recorded in the state file (and this one). */
  ever: Set<string>;
}

interface StateFile {
  [baseUrl: string]: { runs: number; probed: Record<string, string[]> } | undefined;
}

export function defaultStateFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(base, 'dss-conformance', 'state.json');
}

export class Rotation {
  readonly families = new Map<string, Family>();
  /** The fraction of each scalable probe family a run sends (1: all; set once the key's quota is known). */
  fraction = 1;
  /** Why a probe left out of this run's slice was not sent. */
  leftReason = 'left for a later run';
  private earlier: Record<string, string[]> = {};

  private constructor(
    /** How many runs against this base URL came before (from the state file), or a number from the seed. */
    readonly run: number,
    private readonly file: string | undefined,
    private readonly baseUrl: string,
    readonly recorded: boolean,
  ) {}

  static async open(baseUrl: string, file: string | undefined, seed: number): Promise<Rotation> {
    if (!file) return new Rotation(seed, undefined, baseUrl, false);
    const state = await readState(file);
    const mine = state[baseUrl];
    const rotation = new Rotation(mine?.runs ?? 0, file, baseUrl, true);
    rotation.earlier = mine?.probed ?? {};
    return rotation;
  }

  /**
   * The part of `items` this run sends: all when `count` covers them, else `count` items starting where the
   * previous runs stopped (items never probed first), in their order.
   */
  pick<T>(family: string, items: T[], key: (item: T) => string, count = Math.ceil(items.length * this.fraction)) {
    const keys = items.map(key);
    const ever = new Set((this.earlier[family] ?? []).filter((k) => keys.includes(k)));
    const entry: Family = { total: items.length, now: new Set(), ever };
    this.families.set(family, entry);
    const take = Math.max(0, Math.min(items.length, count));
    let order = items.map((_, i) => i);
    if (take < items.length) {
      // Never probed first (in the rotation's order), then the rest, oldest slice first.
      const start = (this.run * take) % Math.max(1, items.length);
      const rotated = [...order.slice(start), ...order.slice(0, start)];
      const fresh = rotated.filter((i) => !ever.has(keys[i] as string));
      order =
        fresh.length >= items.length ? rotated : [...fresh, ...rotated.filter((i) => ever.has(keys[i] as string))];
    }
    const picked = new Set(order.slice(0, take));
    return {
      picked: items.filter((_, i) => picked.has(i)),
      left: items.filter((_, i) => !picked.has(i)),
      /** Call once a picked probe was really sent. */
      sent: (item: T) => {
        const k = key(item);
        entry.now.add(k);
        entry.ever.add(k);
      },
    };
  }

  /** Lines for the report: per family, probed this run and over the recorded runs. */
  coverage(): string[] {
    return [...this.families].map(([family, { total, now, ever }]) => {
      const overall = this.recorded ? `; ${ever.size} of ${total} over ${this.run + 1} run(s) recorded` : '';
      return `${family}: ${now.size} of ${total} this run${overall}`;
    });
  }

  /** Writes this run into the state file (a failure to write is reported, not fatal). */
  async save(): Promise<string | undefined> {
    if (!this.file) return undefined;
    try {
      const state = await readState(this.file);
      const probed: Record<string, string[]> = { ...this.earlier };
      for (const [family, { ever, total }] of this.families) {
        // A family seen whole starts over, so the rotation keeps going round.
        probed[family] = ever.size >= total ? [] : [...ever];
      }
      state[this.baseUrl] = { runs: this.run + 1, probed };
      await mkdir(dirname(this.file), { recursive: true });
      const temporary = `${this.file}.${process.pid}.tmp`;
      await writeFile(temporary, `${JSON.stringify(state)}\n`, { mode: 0o600 });
      await rename(temporary, this.file);
      return undefined;
    } catch (error) {
      return `could not write the coverage state to ${this.file}: ${(error as Error).message}`;
    }
  }
}

async function readState(file: string): Promise<StateFile> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as StateFile) : {};
  } catch {
    return {};
  }
}

/**
 * The slice of a probe family this run sends (all of it unless the key's quota is tight); the rest is reported
 * as skipped, left for the runs after this one.
 */
export function slice<T>(
  ctx: { rotation: Rotation; results: Results },
  check: CheckName,
  items: T[],
  key: (item: T) => string,
  subject: (item: T) => string,
): T[] {
  const { picked, left, sent } = ctx.rotation.pick(check, items, key);
  for (const item of left) ctx.results.skip(subject(item), check, ctx.rotation.leftReason);
  for (const item of picked) sent(item);
  return picked;
}
