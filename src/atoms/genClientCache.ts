/**
 * .what = one SDK client per (url, key), created on first use
 * .why = a loop makes many calls; reusing the client keeps its HTTP connections alive
 */
export const genClientCache = <TClient>(create: (input: { apiKey: string; baseURL: string }) => TClient) => {
  const clients = new Map<string, TClient>();
  return (apiKey: string, baseURL: string): TClient => {
    const key = `${baseURL}\n${apiKey}`;
    let client = clients.get(key);
    if (!client) clients.set(key, (client = create({ apiKey, baseURL })));
    return client;
  };
};
