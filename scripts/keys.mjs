// `npm run keys -- …`: the keys command (server/cli/keys.ts), from its bundle (scripts/bundle.mjs).
import { bundled } from './bundle.mjs';

await import(await bundled('keys'));
