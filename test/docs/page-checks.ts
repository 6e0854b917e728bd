// Checks of the /docs page that read its layout in the browser (docs-page.test.ts): what the console shows
// against what it sends, and whether anything a reader needs is drawn under something else.
import type { Locator, Page } from 'playwright-core';

/** Rows of the console's tables that show a value but are not ticked, so the value shown is not sent. */
export function shownButNotSent(dialog: Locator): Promise<string[]> {
  return dialog.locator('tr').evaluateAll((rows) =>
    rows.flatMap((row) => {
      const include = row.querySelector<HTMLInputElement>('input[type="checkbox"]');
      const value = row.querySelector('[contenteditable][aria-label$="Value"]')?.textContent?.trim() ?? '';
      return include && !include.checked && value !== '' ? [`${row.id || 'row'}=${value}`] : [];
    }),
  );
}

/** The tabs of a locator that are not the topmost element at their own centre: hidden or covered. */
export function coveredTabs(card: Locator): Promise<string[]> {
  return card.getByRole('tab').evaluateAll((tabs) =>
    tabs.flatMap((tab) => {
      const box = tab.getBoundingClientRect();
      const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
      return hit && tab.contains(hit) ? [] : [(tab.textContent ?? '').replace(/status:/i, '').trim()];
    }),
  );
}

/** Lines of a code sample whose text runs into the column of line numbers (a wrapped line under its number). */
export function linesUnderTheirNumbers(block: Locator): Promise<string[]> {
  return block.locator('.line').evaluateAll((lines) =>
    lines.flatMap((line) => {
      const pre = line.closest('pre');
      if (!pre) return [];
      const number = getComputedStyle(line, '::before');
      const textStart =
        pre.getBoundingClientRect().left +
        Number.parseFloat(getComputedStyle(pre).paddingLeft) +
        Number.parseFloat(number.width) +
        Number.parseFloat(number.marginRight);
      const range = document.createRange();
      range.selectNodeContents(line);
      const lefts = Array.from(range.getClientRects())
        .filter((rect) => rect.width > 0)
        .map((rect) => rect.left);
      return lefts.some((left) => left < textStart - 1) ? [(line.textContent ?? '').trim()] : [];
    }),
  );
}

/**
 * Pairs of the console's controls drawn over each other: the sidebar button and the address bar's server, and
 * in every table row a fixed value and the row's buttons.
 */
export function overlappingControls(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const overlap = (a: DOMRect, b: DOMRect) =>
      a.width > 0 &&
      b.width > 0 &&
      a.left < b.right - 1 &&
      b.left < a.right - 1 &&
      a.top < b.bottom - 1 &&
      b.top < a.bottom - 1;
    const found: string[] = [];
    const toggle = document.querySelector('.scalar-sidebar-toggle');
    const server = Array.from(document.querySelectorAll('[role="dialog"] button')).find((button) =>
      button.textContent?.includes('Server:'),
    );
    if (toggle && server && overlap(toggle.getBoundingClientRect(), server.getBoundingClientRect())) {
      found.push('the sidebar button over the server of the address bar');
    }
    const fixedValues = document.querySelectorAll('[role="dialog"] td [data-testid="code-input-lite-disabled"] > span');
    for (const value of Array.from(fixedValues)) {
      const cell = value.closest('td');
      const text = value.getBoundingClientRect();
      for (const button of Array.from(cell?.querySelectorAll('button') ?? [])) {
        // What the reader sees of the value: its box, cut where its cell ends.
        const seen = new DOMRect(
          text.x,
          text.y,
          Math.min(text.right, cell?.getBoundingClientRect().right ?? 0) - text.x,
          text.height,
        );
        if (overlap(seen, button.getBoundingClientRect())) {
          found.push(`"${value.textContent}" under its row's ${button.getAttribute('aria-label') ?? 'button'}`);
        }
      }
    }
    return found;
  });
}
