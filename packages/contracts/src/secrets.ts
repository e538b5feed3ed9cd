/**
 * Field names whose values are secrets anywhere in the platform: they are encrypted at rest,
 * masked in responses and redacted from logs. Matching is case-insensitive.
 */
export const SECRET_FIELD_NAMES = [
  'authorization',
  'token',
  'api_key',
  'apikey',
  'x-api-key',
  'x-goog-api-key',
  'vendor1_api_key',
  'credentials',
  'password',
  'secret',
  'bind_password',
  'email_host_password',
  'client_id',
  'client_secret',
  'cookie',
  'set-cookie',
  'x-pack-signature',
] as const;

const secretNames = new Set<string>(SECRET_FIELD_NAMES);

export function isSecretFieldName(name: string): boolean {
  return secretNames.has(name.toLowerCase());
}
