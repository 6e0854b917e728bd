// Which build of better-sqlite3 this Node.js runs. better-sqlite3 12 derives its objects from node::ObjectWrap,
// whose destructor in Node 24.19+ headers calls RemoveEnvironmentCleanupHook and aborts the process
// ("Assertion failed: (env) != nullptr") when V8 collects a statement with no context entered (a GC run
// from a V8 task, as any long-running service gets). better-sqlite3 13 uses Node-API and is free of that,
// but needs Node-API 10 (Node >= 22.14), which Node 20 lacks. So: 13 where the runtime has Node-API 10,
// else 12, installed under the alias better-sqlite3-node20 (an optional dependency).
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);

/** Node-API 10 is what better-sqlite3 13's prebuilt binary needs. */
export const SQLITE_DRIVER = Number(process.versions.napi) >= 10 ? 'better-sqlite3' : 'better-sqlite3-node20';

let driver: typeof BetterSqlite3 | undefined;

/** The driver, loaded on first use (a runtime it cannot load on gets this message, not a stack trace). */
export function sqliteDriver(): typeof BetterSqlite3 {
  try {
    driver ??= require(SQLITE_DRIVER) as typeof BetterSqlite3;
    return driver;
  } catch (error) {
    throw new Error(
      `SQLite driver ${SQLITE_DRIVER} cannot be loaded on Node.js ${process.version} ` +
        `(${error instanceof Error ? error.message.split('\n')[0] : String(error)}); run \`npm ci\` with this Node.js`,
    );
  }
}
