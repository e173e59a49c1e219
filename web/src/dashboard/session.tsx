import { createContext, useContext } from 'react';
import type { User } from '../api/types.ts';
import type { RequestOptions } from '../shared/api.ts';

export interface Session {
  user: User;
  /** Reads the account again (after a plan change). */
  refreshUser(): Promise<User | null>;
  /** An API call with the session cookie; a 401 signs the dashboard out. */
  call<T>(path: string, options?: RequestOptions): Promise<T>;
  /**
   * Key plaintexts created in this tab, by key id: the playground can use them. They live in
   * memory only and are gone on reload; the API never shows a key twice.
   */
  createdKeys: Readonly<Record<number, string>>;
  rememberKey(id: number, key: string): void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in dashboard');
  return session;
}
