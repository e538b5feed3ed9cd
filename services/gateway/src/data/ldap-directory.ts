import { Client, EqualityFilter, InvalidCredentialsError, OrFilter, type Filter } from 'ldapts';
import type { GeneralSettings } from '@pack/contracts';
import { AppError, BadGatewayError } from '@pack/errors';
import type { Logger } from '@pack/logging';
import type { Directory, SignedInIdentity } from '../domain/sign-in';
import { errorField } from '../domain/error-fields';

type LdapSettings = GeneralSettings['ldap'];

export interface LdapDirectoryOptions {
  /** The attribute that holds the user name (`uid` on OpenLDAP, `sAMAccountName` on AD). */
  userAttribute: string;
  timeoutMs: number;
  logger: Logger;
}

const TLS_FAILURE = /CERT|TLS|SSL|ALTNAME|SIGNATURE/i;

/** What went wrong talking to the server, in words an operator can act on; never a password. */
function directoryError(uri: string, step: string, error: unknown): AppError {
  if (error instanceof AppError) return error;
  const code = errorField(error, 'code');
  const message = error instanceof Error ? error.message : String(error);
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ETIMEDOUT', 'ECONNRESET'].includes(code))
    return new BadGatewayError(`The LDAP server ${uri} is unreachable (${code}); check SERVER_URI.`, {
      cause: error,
    });
  if (TLS_FAILURE.test(code) || TLS_FAILURE.test(message))
    return new BadGatewayError(`TLS with the LDAP server ${uri} failed: ${code || message}.`, {
      cause: error,
    });
  if (/timeout/i.test(message))
    return new BadGatewayError(`The LDAP server ${uri} did not answer in time (${step}).`, { cause: error });
  return new BadGatewayError(`The LDAP server ${uri} failed during ${step}: ${message}`, { cause: error });
}

const first = (value: unknown): string | null => {
  const item = Array.isArray(value) ? (value[0] as unknown) : value;
  if (typeof item === 'string') return item;
  return Buffer.isBuffer(item) ? item.toString('utf8') : null;
};

/**
 * Sign-in against an LDAP directory, as the settings describe it at this moment: bind as BIND_DN
 * (anonymous when empty), find the user under USER_SEARCH_BASE_DN, bind as that entry with the
 * password, then read the `cn` of the groups under GROUP_SEARCH_QUERY_BASE_DN that list the user
 * (`member`, `uniqueMember` or `memberUid`). A new connection per sign-in: settings may change
 * between two, and sign-ins are rare.
 */
export class LdapDirectory implements Directory {
  constructor(private readonly options: LdapDirectoryOptions) {}

  async authenticate(
    settings: LdapSettings,
    username: string,
    password: string,
  ): Promise<SignedInIdentity | null> {
    // An empty password is an unauthenticated bind, which many servers accept as anonymous.
    if (password === '') return null;
    const uris = settings.SERVER_URI.split(/\s+/).filter(Boolean);
    if (uris.length === 0 || !settings.USER_SEARCH_BASE_DN)
      throw new BadGatewayError(
        'LDAP is enabled but SERVER_URI or USER_SEARCH_BASE_DN is empty in the general settings.',
      );
    let lastError: AppError | undefined;
    for (const uri of uris) {
      try {
        return await this.authenticateAt(uri, settings, username, password);
      } catch (error) {
        lastError = directoryError(uri, 'sign-in', error);
        // Only an unreachable server makes the next URI worth trying.
        if (!lastError.detail.includes('unreachable')) throw lastError;
      }
    }
    throw lastError ?? new BadGatewayError('No LDAP server answered.');
  }

  private async authenticateAt(
    uri: string,
    settings: LdapSettings,
    username: string,
    password: string,
  ): Promise<SignedInIdentity | null> {
    const client = new Client({
      url: uri,
      timeout: this.options.timeoutMs,
      connectTimeout: this.options.timeoutMs,
    });
    try {
      if (settings.BIND_DN) {
        try {
          await client.bind(settings.BIND_DN, settings.BIND_PASSWORD);
        } catch (error) {
          if (error instanceof InvalidCredentialsError)
            throw new BadGatewayError(
              `The LDAP server ${uri} refused the bind as BIND_DN; check BIND_DN and BIND_PASSWORD in the general settings.`,
            );
          throw directoryError(uri, 'the bind as BIND_DN', error);
        }
      }
      const { searchEntries } = await client.search(settings.USER_SEARCH_BASE_DN, {
        scope: 'sub',
        filter: new EqualityFilter({ attribute: this.options.userAttribute, value: username }),
        attributes: ['dn', this.options.userAttribute, 'mail'],
        sizeLimit: 2,
      });
      if (searchEntries.length !== 1) {
        if (searchEntries.length > 1)
          this.options.logger.warn({ username }, 'LDAP user name matches several entries');
        return null;
      }
      const entry = searchEntries[0]!;
      // A second connection for the user's bind: the service account's session stays as it was.
      const userClient = new Client({
        url: uri,
        timeout: this.options.timeoutMs,
        connectTimeout: this.options.timeoutMs,
      });
      try {
        await userClient.bind(entry.dn, password);
      } catch (error) {
        if (error instanceof InvalidCredentialsError) return null;
        throw directoryError(uri, "the user's bind", error);
      } finally {
        await userClient.unbind().catch(() => undefined);
      }
      const name = first(entry[this.options.userAttribute]) ?? username;
      return {
        username: name,
        email: first(entry.mail),
        groups: await this.groups(client, settings, entry.dn, name),
      };
    } finally {
      await client.unbind().catch(() => undefined);
    }
  }

  private async groups(client: Client, settings: LdapSettings, dn: string, name: string): Promise<string[]> {
    if (!settings.GROUP_SEARCH_QUERY_BASE_DN) return [];
    const filter: Filter = new OrFilter({
      filters: [
        new EqualityFilter({ attribute: 'member', value: dn }),
        new EqualityFilter({ attribute: 'uniqueMember', value: dn }),
        new EqualityFilter({ attribute: 'memberUid', value: name }),
      ],
    });
    const { searchEntries } = await client.search(settings.GROUP_SEARCH_QUERY_BASE_DN, {
      scope: 'sub',
      filter,
      attributes: ['cn'],
    });
    return searchEntries.map((group) => first(group.cn)).filter((cn): cn is string => cn !== null);
  }
}
