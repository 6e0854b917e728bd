// Store a domain, as one story: the name in its stored form (lowercase, no trailing dot, IDNs as punycode) and the
// pages normalised, refused when no DNS check could ever prove it, then created unless another account holds the
// name or this one has it already. POST /domains (handlers.ts) maps the outcome to an answer; the sandbox's seed
// (index.ts) tells the same story for its records.
import type { ChangeCause } from '../db/owned.js';
import { uncheckableName } from './check-rules.js';
import { normalizeHostname, normalizePageUrl } from './fields.js';
import { type DomainRepository, DuplicateDomainError, NameHeldError, type NewDomain } from './repository.js';

/** A domain as a client asks for it: the name and pages as sent (the name valid by fields.ts's rule). */
export interface DomainToStore {
  name: string;
  index_page?: string | null;
  not_found_page?: string | null;
  metadata?: NewDomain['metadata'];
}

export type StoreOutcome =
  /** Stored: the record and its version. */
  | { kind: 'stored'; domain: Awaited<ReturnType<DomainRepository['create']>>; name: string }
  /** No check could prove the name (its challenge name is no DNS name): why. */
  | { kind: 'uncheckable'; name: string; reason: string }
  /** Another account holds the name (proved it, and its claim has not lapsed). */
  | { kind: 'held-elsewhere'; name: string }
  /** This account has a domain of this name already: its id, unless it was deleted meanwhile. */
  | { kind: 'duplicate'; name: string; existingId: number | undefined };

export async function storeDomain(
  domains: DomainRepository,
  accountId: number,
  sent: DomainToStore,
  cause: ChangeCause,
): Promise<StoreOutcome> {
  // The field rule (fields.ts) has judged the name, so it normalises.
  const name = normalizeHostname(sent.name) ?? sent.name;
  const reason = uncheckableName(name);
  if (reason) return { kind: 'uncheckable', name, reason };
  try {
    const domain = await domains.create(
      accountId,
      {
        name,
        index_page: normalizePageUrl(sent.index_page) ?? null,
        not_found_page: normalizePageUrl(sent.not_found_page) ?? null,
        metadata: sent.metadata,
      },
      cause,
    );
    return { kind: 'stored', domain, name };
  } catch (error) {
    if (error instanceof NameHeldError) return { kind: 'held-elsewhere', name };
    if (error instanceof DuplicateDomainError) {
      return { kind: 'duplicate', name, existingId: await domains.idByName(accountId, name) };
    }
    throw error;
  }
}
