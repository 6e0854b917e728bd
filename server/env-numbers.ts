// The one reader of numbers in the environment (server/config.ts, server/webhooks/settings.ts): the text, its
// range and whether it must be whole, and the problem in words an operator can act on.

export interface NumberRule {
  min?: number;
  max?: number;
  /** Whole numbers only. */
  integer?: boolean;
  /** The minimum itself is refused ("above 0"). */
  aboveMin?: boolean;
  /** What the number counts ("seconds", "bytes"), said in the problem. */
  unit?: string;
}

/** The number `text` spells; when it breaks `rule`, the problem is pushed onto `problems` (and NaN returned). */
export function numberSetting(name: string, text: string, rule: NumberRule, problems: string[]): number {
  const { min = 0, max = Number.MAX_SAFE_INTEGER, integer = false, aboveMin = false, unit } = rule;
  const value = Number(text);
  const fits =
    /^\d+(\.\d+)?$/.test(text) &&
    (aboveMin ? value > min : value >= min) &&
    value <= max &&
    (!integer || Number.isInteger(value));
  if (fits) return value;
  const kind = unit ? `a number of ${unit}` : integer ? 'an integer' : 'a number';
  problems.push(`${name} must be ${kind} ${aboveMin ? 'above' : 'from'} ${min} to ${max} (got "${text}")`);
  return Number.NaN;
}
