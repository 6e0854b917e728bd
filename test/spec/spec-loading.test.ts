// The spec is loaded and checked when the app is built, not on the first request.

import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { createApp } from '../../server/app.js';
import { openDatabase } from '../../server/db/database.js';
import { ApiSpec } from '../../server/spec.js';

describe('createApp', () => {
  it('rejects a spec that is not valid OpenAPI before serving anything', async () => {
    const document = parse(ApiSpec.load().yaml);
    document.paths['/domains'].get.responses = 'not a responses object';
    const db = openDatabase('sqlite::memory:');
    try {
      await expect(createApp({ db, spec: new ApiSpec(stringify(document)) })).rejects.toThrow(/apiDoc was invalid/);
    } finally {
      await db.destroy();
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
