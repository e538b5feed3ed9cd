import { z } from 'zod';
import {
  generalSettingsPatchSchema,
  generalSettingsSchema,
  generalSettingsViewSchema,
  roleSchema,
  type Principal,
} from '@pack/contracts';
import {
  type ListKey,
  listQuerySchema,
  NotFoundError,
  pageOf,
  pageRequest,
  pageSchema,
  problemTable,
  route,
  type Reply,
} from '@pack/http-kit';
import type { TargetPolicy } from '@pack/net-guard';
import type { GeneralSettingsUseCases, SettingsState } from '../domain/settings-use-cases';
import { REQUIRED_WHILE_ENABLED } from '../domain/plan';
import { checkTargetUrls } from './target-urls';

export const SETTINGS_PATH = '/v1/core/general_settings/';
/** The version of the settings a response reflects; the settings cache and ETags rely on it. */
export const VERSION_HEADER = 'x-settings-version';

const auditEntrySchema = z.object({
  version: z.number().int(),
  at: z.string(),
  actor: z.object({ id: z.number().int(), username: z.string(), role: roleSchema }),
  action: z.enum(['update', 'generate_ui_schema', 'reencrypt']),
  groups: z.array(z.string()),
  changes: z.array(
    z.object({
      field: z.string(),
      secret: z.literal(true).optional(),
      old: z.unknown().optional(),
      new: z.unknown().optional(),
    }),
  ),
});

const problems = problemTable({
  403: 'Not an admin',
  404: 'Not a service of the platform',
  409: 'Too many concurrent changes; try again',
});

/** The masked form is another representation of the same version, so it gets its own tag. */
const etag = (state: SettingsState) => `"settings-v${state.version}${state.masked ? '-masked' : ''}"`;
/** The headers of every answer that carries the settings, for the OpenAPI document. */
const stateHeaders = {
  [VERSION_HEADER]: 'The version of the settings this answer reflects',
  etag: 'Send it back as If-None-Match to get 304 while nothing changed',
};

function stateReply(state: SettingsState): Reply {
  return {
    body: state.view,
    headers: {
      [VERSION_HEADER]: String(state.version),
      etag: etag(state),
      'cache-control': 'private, no-cache',
    },
  };
}

/** Principals that services sign for themselves (id 0, `system:<service>`); no user has id 0. */
const isSystem = (principal: Principal) => principal.id === 0 && principal.username.startsWith('system:');

const actorOf = ({ id, username, role }: Principal) => ({ id, username, role });

/** The history is newest version first: a version number is its entry's key. */
const versionKey: ListKey<{ version: number }> = { shape: ['int'], of: (entry) => [entry.version] };

/** `identityProvider`: where the gateway may reach the issuer (oauth.ISSUER_URL). */
export function settingsRoutes(settings: GeneralSettingsUseCases, identityProvider: TargetPolicy) {
  return [
    route({
      method: 'get',
      path: SETTINGS_PATH,
      summary:
        'General settings of every group (secrets masked: admins see the last four characters, other roles none; CLIENT_SECRET never shown)',
      access: 'authenticated',
      responses: {
        200: {
          description: 'The settings document',
          schema: generalSettingsViewSchema,
          headers: stateHeaders,
        },
        304: { description: 'Unchanged since the version in If-None-Match', headers: stateHeaders },
        ...problems(401),
      },
      handler: async ({ req, principal, log }) => {
        const state = await settings.readAs(principal);
        // Reads are audited in the service log (who read which version), not in the database.
        log.info({ actor: actorOf(principal), settings_version: state.version }, 'general settings read');
        const reply = stateReply(state);
        if (req.get('if-none-match') === etag(state)) return { status: 304, headers: reply.headers };
        return reply;
      },
    }),
    route({
      method: 'patch',
      path: SETTINGS_PATH,
      summary: `Change any subset of groups and fields; a masked secret sent back keeps the stored one. A group left with ENABLED true needs these fields non-empty, the stored values counting: ${Object.entries(
        REQUIRED_WHILE_ENABLED,
      )
        .map(([group, fields]) => fields.map((field) => `${group}.${field}`).join(', '))
        .join(', ')} (400 naming each missing one)`,
      access: ['admin'],
      body: generalSettingsPatchSchema,
      responses: {
        200: {
          description: 'The settings after the change',
          schema: generalSettingsViewSchema,
          headers: stateHeaders,
        },
        ...problems(400, 401, 403, 409),
      },
      handler: async ({ body, principal }) => {
        checkTargetUrls(body, identityProvider);
        return stateReply(await settings.patch(principal, body));
      },
    }),
    route({
      method: 'post',
      path: `${SETTINGS_PATH}generate_ui_schema/`,
      summary:
        'Generate Schema: build the Generative UI Catalog Schema from the component registry and store it',
      access: ['admin'],
      responses: {
        200: {
          description: 'The settings with the generated catalog schema',
          schema: generalSettingsViewSchema,
          headers: stateHeaders,
        },
        ...problems(400, 401, 403, 409),
      },
      handler: async ({ principal }) => stateReply(await settings.generateCatalogSchema(principal)),
    }),
    route({
      method: 'get',
      path: `${SETTINGS_PATH}plaintext/`,
      summary:
        "The settings with secrets in plaintext, for the platform's own services (the gateway signs users in and sends mail); 404 to every user",
      access: 'authenticated',
      responses: {
        200: {
          description: 'The settings document, secrets in plaintext',
          schema: generalSettingsSchema,
          headers: stateHeaders,
        },
        304: { description: 'Unchanged since the version in If-None-Match', headers: stateHeaders },
        ...problems(401, 404),
      },
      handler: async ({ req, principal, log }) => {
        // A 404, not a 403: to a user this route does not exist.
        if (!isSystem(principal)) throw new NotFoundError(`no such path: ${req.path}`);
        const tag = (version: number) => `"settings-v${version}-plaintext"`;
        const headers = (version: number) => ({
          [VERSION_HEADER]: String(version),
          etag: tag(version),
          'cache-control': 'no-store',
        });
        const { version } = await settings.read();
        if (req.get('if-none-match') === tag(version)) return { status: 304, headers: headers(version) };
        const plain = await settings.readPlaintext();
        log.info({ reader: principal.username, settings_version: plain.version }, 'plaintext settings read');
        return { body: plain.settings, headers: headers(plain.version) };
      },
    }),
    route({
      method: 'get',
      path: `${SETTINGS_PATH}audit/`,
      summary: 'Who changed which settings fields when, newest first (never secret values)',
      access: ['admin'],
      query: listQuerySchema,
      responses: {
        200: { description: 'A page of changes', schema: pageSchema(auditEntrySchema) },
        ...problems(400, 401, 403),
      },
      handler: async ({ query, req }) => {
        const paging = pageRequest(query);
        const { count, items } = await settings.audit(paging.limit, paging.start);
        const results = items.map((entry) => ({
          version: entry.version,
          at: entry.at.toISOString(),
          actor: entry.actor,
          action: entry.action,
          groups: entry.changedGroups,
          changes: entry.changes,
        }));
        return { body: pageOf(req, query, count, results, versionKey) };
      },
    }),
  ];
}
