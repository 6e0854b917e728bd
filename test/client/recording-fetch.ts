// A fetch for the client's tests, passed in through its `fetch` option: it records every request the client
// sends and checks every answer against the spec, as the other suites' test client does.
import { checkResponse } from '../support/contract.js';

export interface SentRequest {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
}

export interface RecordingFetch {
  fetch: (input: Request, init?: RequestInit) => Promise<Response>;
  requests: SentRequest[];
}

export function recordingFetch(): RecordingFetch {
  const requests: SentRequest[] = [];
  return {
    requests,
    async fetch(input, init) {
      requests.push({
        method: input.method,
        url: new URL(input.url),
        headers: new Headers(input.headers),
        body: await input.clone().text(),
      });
      const response = await fetch(input, init);
      await checkResponse(input.method, input.url, response);
      return response;
    },
  };
}
