// Why a seller's lead went unsold, as its pages say it. The words are the API's: a seller's
// `distribution.reason` and `ineligible_reasons` are already in seller words, from the one closed
// list in common/visibility/src/seller_words.cpp (docs/visibility.md), so nothing here names a
// buyer or maps an operator's reason. This only makes them sentences, and says what the seller
// may already tell from its own lead: offered to no buyer, with no buyer ruled out, means no
// buyer was buying its vertical. Pure: unit-tested without a browser.

type Lead = Record<string, any>;

/** The statuses a lead may need explaining in: it was not sold (or not taken at all). */
const EXPLAINED = new Set(['unsold', 'rejected', 'failed', 'duplicate']);

/** "no buyer bid on the lead" → "No buyer bid on the lead." */
export function sentence(words: string): string {
  const t = words.trim();
  if (!t) return t;
  const head = t[0].toUpperCase() + t.slice(1);
  return /[.!?]$/.test(head) ? head : `${head}.`;
}

/** Whether the whole lead says no buyer was buying its vertical: unsold, offered to nobody, and
 *  no buyer ruled out (a buyer that was there but did not fit would be in `ineligible_reasons`). */
function noBuyerInVertical(l: Lead): boolean {
  const o = l.offers;
  return l.status === 'unsold' && Array.isArray(l.ineligible_reasons) && l.ineligible_reasons.length === 0 && !!o && Number(o.pings ?? 0) === 0 && Number(o.posts ?? 0) === 0;
}

/** Why the lead was not sold, for its page: a headline and what stopped buyers (each a
 *  sentence), or null for a lead sold, returned or still pending. */
export function unsoldWhy(l: Lead): { headline: string; details: string[] } | null {
  if (!EXPLAINED.has(String(l.status))) return null;
  const words = typeof l.distribution?.reason === 'string' ? l.distribution.reason : '';
  const headline = noBuyerInVertical(l) ? `No buyer was buying ${l.vertical ? `the ${l.vertical} vertical` : 'this vertical'} when it arrived.` : sentence(words || 'no reason given');
  const details = Array.isArray(l.ineligible_reasons) ? l.ineligible_reasons.filter((r: unknown) => typeof r === 'string' && r).map((r: string) => sentence(r)) : [];
  return { headline, details };
}

/** The lead list's short hint under an unsold lead's status: its reason as a sentence, or null. */
export function unsoldHint(l: Lead): string | null {
  if (!EXPLAINED.has(String(l.status))) return null;
  const words = l.distribution?.reason;
  return typeof words === 'string' && words ? sentence(words) : null;
}
