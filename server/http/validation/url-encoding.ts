// application/x-www-form-urlencoded text, a form body or a query string, read by one rule: every %-escape is
// well formed and the bytes they spell are UTF-8. Anything else is unreadable (400), never guessed at.
const RAW_OUTSIDE_ASCII = /[^\x20-\x7e]/;

/** Whether every name and value of the text decodes. */
export function decodesAsUtf8(text: string): boolean {
  // A query string arrives as Latin-1 text of the raw bytes; only %-escapes may carry anything beyond ASCII.
  if (RAW_OUTSIDE_ASCII.test(text)) return false;
  for (const part of text.split('&')) {
    try {
      decodeURIComponent(part.replace(/\+/g, ' '));
    } catch {
      return false;
    }
  }
  return true;
}
