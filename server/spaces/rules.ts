// The rules of a space as a client sends it, in one place for every entry point: the name is stored trimmed,
// and a space stored without a colour has colour 1 (the spec's description says so; it has no `default` keyword,
// see space-store.yaml). POST, PUT and PATCH /spaces (handlers.ts) and the sandbox's seed (index.ts) store
// through them; a field the spec adds passes through as sent.
import type { ChangeCause } from '../db/owned.js';
import type { NewSpace, SpaceChanges, SpaceRepository } from './repository.js';

/** A space as a client asks for it: the body of a store, colour optional. */
export type SpaceToStore = Omit<NewSpace, 'color'> & { color?: number };

/** The space to store: the name trimmed, colour 1 when none was sent. */
export function newSpaceOf(sent: SpaceToStore): NewSpace {
  return { ...sent, name: sent.name.trim(), color: sent.color ?? 1 };
}

/** The changes an update asks for, as sent, the name trimmed. */
export function spaceChangesOf(sent: SpaceChanges): SpaceChanges {
  return { ...sent, ...(sent.name !== undefined ? { name: sent.name.trim() } : {}) };
}

/** Stores a space by these rules; the record and its version. */
export function storeSpace(spaces: SpaceRepository, accountId: number, sent: SpaceToStore, cause: ChangeCause) {
  return spaces.create(accountId, newSpaceOf(sent), cause);
}
