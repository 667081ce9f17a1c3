// Names for the ids the API gives: buyers, sellers and campaigns, from the lists the signed-in
// user may read (docs/visibility.md): the operator every list, a seller its own campaigns, a
// buyer none (its sellers stay source codes). Only ids the API already gave this reader are
// named, so a name never tells a party more than the id it was shown.
import { get } from './api';
import { Account } from './report';

export type Names = Map<string, string>;

/** The lists an account may read, with each record's id field. */
export function nameSources(account: Account): [string, string][] {
  if (account === 'operator') return [['/v1/sellers', 'seller_id'], ['/v1/buyers?limit=100', 'buyer_id'], ['/v1/campaigns', 'campaign_id']];
  if (account === 'seller') return [['/v1/campaigns', 'campaign_id']];
  return [];
}

/** id → name from the lists' rows (rows with no name, or no id, are left out). */
export function namesFrom(lists: { data?: Record<string, unknown>[] }[], ids: string[]): Names {
  const out: Names = new Map();
  lists.forEach((list, i) => {
    for (const r of list.data ?? []) {
      const id = r[ids[i]], name = r.name;
      if (typeof id === 'string' && typeof name === 'string' && name) out.set(id, name);
    }
  });
  return out;
}

/** The names this account may read; a list the server refuses is left out (ids stay ids). */
export async function loadNames(account: Account): Promise<Names> {
  const sources = nameSources(account);
  const lists = await Promise.all(sources.map(([path]) => get<{ data?: Record<string, unknown>[] }>(path).catch(() => ({ data: [] }))));
  return namesFrom(lists, sources.map(([, id]) => id));
}
