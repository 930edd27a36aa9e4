import type { AtomAuth } from './genAtom.js';

/**
 * .what = one SDK client per (url, credential), created on first use
 * .why = a loop makes many calls; reusing the client keeps its HTTP connections alive; the SDK module itself is
 *        imported only when its supplier is first called, so a claude run never loads the openai SDK and vice versa
 */
export const genClientCache = <TClient>(create: (input: { auth: AtomAuth; baseURL: string }) => Promise<TClient>) => {
  const clients = new Map<string, Promise<TClient>>();
  return (input: { auth: AtomAuth; baseURL: string }): Promise<TClient> => {
    const key = `${input.baseURL}\n${input.auth.kind}\n${input.auth.value}`;
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
