// `npm run backup -- <file>` and `npm run restore -- <file>` (server/cli/backup.ts), from its bundle
// (scripts/bundle.mjs).
import { bundled } from './bundle.mjs';

await import(await bundled('backup'));
