// What every page shares: the signed-in user, navigation, and the place pages draw into.
import { User } from './api';

export interface Ctx {
  user: User;
  params: Record<string, string>;
  search: URLSearchParams;
  /** Follows a client route (no reload). */
  go: (path: string) => void;
}

export type Page = (ctx: Ctx, root: HTMLElement) => Promise<void> | void;

export const isOperator = (u: User) => u.account === 'operator';
