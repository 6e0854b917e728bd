// `curl -d '{"name":"B"}'` sends JSON labelled as a form (application/x-www-form-urlencoded, curl's default).
// Parsed as a form, the whole document would become one field name; answer what to change instead.

import { HttpProblem } from '../problems/problem.js';
import { FORM, JSON_TYPE } from './media-types.js';

/** A form body that is really a JSON object or array: 415 naming the header to send. */
export function refuseJsonSentAsForm(raw: Buffer, formAccepted: boolean): void {
  const text = raw.toString('utf8').trim();
  if (!/^[{[]/.test(text)) return;
  try {
    JSON.parse(text);
  } catch {
    return;
  }
  throw new HttpProblem(
    'unsupported-media-type',
    `The body is JSON but was sent as ${FORM} (what curl -d sends unless told otherwise): ` +
      (formAccepted
        ? `send it with "Content-Type: ${JSON_TYPE}", or send a form such as name=Marketing&color=3.`
        : `send it with "Content-Type: ${JSON_TYPE}": this operation takes JSON only.`),
  );
}
