// Test mode (docs/dashboard.md, "Test mode"): the badge a test lead carries in the lead list
// (rows and phone cards) and on its page, and the badge of a seller or campaign in test mode.
// Pure: unit-tested without a browser.
import { h } from './dom';

/** "Test" for a lead, seller or campaign the API says is a test (`test` or `test_mode`); else null. */
export function testBadge(test: unknown, what: 'lead' | 'mode' = 'lead'): HTMLElement | null {
  if (test !== true) return null;
  const title = what === 'lead' ? 'A test lead: stored and shown, never offered to a buyer' : 'In test mode: every lead is a test, never offered to a buyer';
  return h('span', { class: 'badge badge-test', title }, what === 'lead' ? 'Test' : 'Test mode');
}

/** Whether a lead's status is the test one, which its Test badge already says. */
export function isTestStatus(l: { test?: unknown; status?: unknown }): boolean {
  return l.test === true && l.status === 'test';
}

/** The lead list's `test` filter: any, test leads only, real leads only. */
export const TEST_FILTER: [string, string][] = [
  ['', 'tests and real'],
  ['true', 'test leads only'],
  ['false', 'real leads only'],
];
