import type { AtomAuth } from './genAtom.js';

/** .what = what one SDK client is made for: an endpoint, a credential, and the fetch it sends with (the SDK's own when absent) */
export interface AtomClientKey {
  auth: AtomAuth;
  baseURL: string;
  fetch?: typeof globalThis.fetch;
}

/** .what = a number per fetch function, so a cache key can name which fetch a client was made with */
const fetchIds = new WeakMap<object, number>();
let fetchCount = 0;
const idOf = (fetch: AtomClientKey['fetch']): string => {
  if (!fetch) return 'sdk';
  if (!fetchIds.has(fetch)) fetchIds.set(fetch, ++fetchCount);
  return String(fetchIds.get(fetch));
};

/**
 * .what = one SDK client per (url, credential, fetch), created on first use
 * .why = a loop makes many calls; reusing the client keeps its HTTP connections alive; the SDK module itself is
 *        imported only when its supplier is first called, so a claude run never loads the openai SDK and vice versa
 */
export const genClientCache = <TClient>(create: (input: AtomClientKey) => Promise<TClient>) => {
  const clients = new Map<string, Promise<TClient>>();
  return (input: AtomClientKey): Promise<TClient> => {
    const key = `${input.baseURL}\n${input.auth.kind}\n${input.auth.value}\n${idOf(input.fetch)}`;
    let client = clients.get(key);
    if (!client) {
      client = create(input);
      clients.set(key, client);
      // a failed import must not be cached as the client forever
      client.catch(() => clients.delete(key));
    }
    return client;
  };
};
