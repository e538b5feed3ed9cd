/** Any value as text for a person: strings as they are, nothing as empty, the rest as JSON. */
export const asText = (value: unknown): string =>
  typeof value === 'string' ? value : value === null || value === undefined ? '' : JSON.stringify(value);
