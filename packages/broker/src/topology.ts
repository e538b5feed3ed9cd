/** Names of everything the broker declares, derived from one namespace so tests never collide. */
export function topologyNames(namespace: string) {
  return {
    events: `${namespace}.events`,
    deadLetters: `${namespace}.dlx`,
    queue: (consumer: string) => `${namespace}.${consumer}`,
    retryQueue: (consumer: string) => `${namespace}.${consumer}.retry`,
    deadLetterQueue: (consumer: string) => `${namespace}.${consumer}.dlq`,
  };
}
