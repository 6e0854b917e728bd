// The spec: a spec naming a format no module validates is refused when the app is built; a path that is not
// valid OpenAPI is never served (express-openapi-validator reports it to every request it would have validated).

import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { createApp } from '../../server/app.js';
import { openDatabase } from '../../server/db/database.js';
import { createLogger } from '../../server/logger.js';
import { ApiSpec } from '../../server/spec-model.js';
import { startServer } from '../support/server.js';

describe('createApp', () => {
  // express-openapi-validator loads the spec when the first request reaches it and passes a load failure on
  // to every request (its documented behaviour); the service itself only ever loads the bundled spec, which CI
  // checks (the test below). Each path has a validator given that path of the spec (request-validation.ts): a
  // path that is not valid OpenAPI is never served, every request to it is a 500.
  it('never serves a path that is not valid OpenAPI: every request to it fails, naming why in the log', async () => {
    const document = parse(ApiSpec.load().yaml);
    document.paths['/domains'].get.responses = 'not a responses object';
    const lines: string[] = [];
    const server = await startServer({
      spec: new ApiSpec(stringify(document)),
      logger: createLogger('error', (line) => lines.push(line)),
    });
    try {
      const { key } = await server.account();
      const response = await fetch(`${server.apiUrl}/domains`, { headers: { Authorization: `Bearer ${key}` } });
      expect(response.status).toBe(500);
      expect(lines.join('\n')).toMatch(/apiDoc was invalid/);
    } finally {
      await server.close();
    }
  });

  it('refuses a spec naming a format that no resource module validates', async () => {
    const document = parse(ApiSpec.load().yaml);
    document.components.schemas['space-name-typo'] = { type: 'string', format: 'space-nmae' };
    const db = openDatabase('sqlite::memory:');
    try {
      await expect(createApp({ db, spec: new ApiSpec(stringify(document)) })).rejects.toThrow(
        /formats that no resource module validates: "space-nmae" \(at #\/components\/schemas\/space-name-typo\)/,
      );
    } finally {
      await db.destroy();
    }
  });

  it('the committed spec passes the OpenAPI schema check that the service skips for it at start', async () => {
    const bundled = ApiSpec.load();
    expect(bundled.bundled).toBe(true);
    const db = openDatabase('sqlite::memory:');
    try {
      await expect(createApp({ db, spec: new ApiSpec(bundled.yaml) })).resolves.toBeTypeOf('function');
    } finally {
      await db.destroy();
    }
  });

  it('reads the bundled spec from its JSON twin, the same document as the YAML', () => {
    const bundled = ApiSpec.load();
    expect(bundled.document).toEqual(parse(bundled.yaml));
    expect(new ApiSpec(bundled.yaml).bundled).toBe(false);
  });

  it('builds with the committed spec', async () => {
    const db = openDatabase('sqlite::memory:');
    try {
      await expect(createApp({ db })).resolves.toBeTypeOf('function');
    } finally {
      await db.destroy();
    }
  });
});
