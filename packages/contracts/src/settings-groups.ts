import { z } from 'zod';
import {
  MAX_TEXT,
  bool,
  text,
  secret,
  optionalHttpUrl,
  optionalServerUrl,
  perMinute,
  LDAP_URIS,
  HOST,
  emptyOr,
  dn,
  stateFilter,
  catalogSchemaValue,
  catalogSchemaWrite,
} from './settings-fields';

/**
 * Where the gateway may reach the identity provider: an administrator's own, often on the company
 * network, so private networks and loopback pass (as model URLs, MODEL_URL_RULE).
 */
export const IDENTITY_PROVIDER_URL_RULE =
  "https, or plain http to a provider on the gateway's own host (loopback); public, private-network (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) and loopback addresses are allowed; link-local (169.254/16, fe80::/10), cloud metadata and other special addresses are refused unless PACK_ALLOWED_TARGET_CIDRS of the gateway and settings services names their range. A host name is checked again at every connection";

/** The General Settings groups of spec 2.8: each field's type and default, declared once. */

export type Fields = Record<string, z.ZodType>;
type Values<F extends Fields> = { [K in keyof F]: z.output<F[K]> };

export interface GroupDefinition<F extends Fields> {
  label: string;
  fields: F;
  defaults: Values<F>;
  /** Fields whose PATCH type differs from the read type (stricter checks on write). */
  writeTypes?: Partial<Record<keyof F, z.ZodType>>;
}
const defineGroup = <F extends Fields>(definition: GroupDefinition<F>) => definition;

export const groups = {
  ldap: defineGroup({
    label: 'LDAP',
    fields: {
      ENABLED: bool('Users may sign in with LDAP'),
      SERVER_URI: emptyOr(
        LDAP_URIS,
        MAX_TEXT,
        'must be ldap:// or ldaps:// URIs separated by spaces, or empty',
      ).describe('Connection string: ldap:// or ldaps:// URIs separated by spaces'),
      BIND_DN: dn('DN the service binds as'),
      BIND_PASSWORD: secret('Password of BIND_DN'),
      USER_SEARCH_BASE_DN: dn('Base DN of the user search'),
      GROUP_SEARCH_QUERY_BASE_DN: dn('Base DN of the group search'),
    },
    defaults: {
      ENABLED: false,
      SERVER_URI: '',
      BIND_DN: '',
      BIND_PASSWORD: '',
      USER_SEARCH_BASE_DN: '',
      GROUP_SEARCH_QUERY_BASE_DN: '',
    },
  }),
  smtp: defineGroup({
    label: 'SMTP',
    fields: {
      ENABLED: bool('Mail is sent through SMTP'),
      EMAIL_HOST: emptyOr(HOST, 253, 'must be a host name or IP address, or empty').describe(
        'SMTP server host',
      ),
      EMAIL_PORT: z
        .number()
        .int('must be a whole number')
        .min(1, 'must be at least 1')
        .max(65535, 'must be at most 65535')
        .describe('SMTP server port'),
      EMAIL_HOST_USER: text('SMTP user name', 255),
      EMAIL_HOST_PASSWORD: secret('SMTP password'),
      EMAIL_USE_TLS: bool('Use STARTTLS'),
    },
    defaults: {
      ENABLED: false,
      EMAIL_HOST: '',
      EMAIL_PORT: 587,
      EMAIL_HOST_USER: '',
      EMAIL_HOST_PASSWORD: '',
      EMAIL_USE_TLS: true,
    },
  }),
  feedback: defineGroup({
    label: 'Feedback',
    fields: {
      ENABLED: bool('Show the feedback link'),
      feedback_link: optionalHttpUrl('Where the feedback link points'),
    },
    defaults: { ENABLED: false, feedback_link: '' },
  }),
  oauth: defineGroup({
    label: 'Identity-provider OAuth',
    fields: {
      ENABLED: bool('Users may sign in through the identity provider (single sign-on)'),
      CLIENT_ID: secret('OAuth client id'),
      CLIENT_SECRET: secret('OAuth client secret, write-only'),
      ISSUER_URL: optionalServerUrl(
        `The identity provider's issuer URL; the gateway reads its OpenID configuration at <issuer>/.well-known/openid-configuration. Empty: the gateway's OIDC_ISSUER_URL. ${IDENTITY_PROVIDER_URL_RULE}`,
      ),
      REDIRECT_BASE_URL: optionalServerUrl(
        "The platform's public address as browsers reach the gateway (scheme, host and port, such as https://pack.example.com); register <it>/v1/core/auth/oidc/callback/ as the redirect URI at the identity provider. Empty: the gateway's PUBLIC_URL, else the address each sign-in request came to",
        { originOnly: true },
      ),
    },
    defaults: { ENABLED: false, CLIENT_ID: '', CLIENT_SECRET: '', ISSUER_URL: '', REDIRECT_BASE_URL: '' },
  }),
  currency: defineGroup({
    label: 'Currency',
    fields: {
      ENABLED: bool('Show costs in the chosen currency'),
      currency: z
        .enum(['USD', 'EUR', 'GBP'], { error: 'must be one of USD, EUR, GBP' })
        .describe('Displayed currency'),
    },
    defaults: { ENABLED: true, currency: 'USD' },
  }),
  charges: defineGroup({
    label: 'Charges Settings',
    fields: {
      ENABLED: bool(
        'Cost hiding is on: the three rules below apply. Off (the default), every role sees costs and the rules below are ignored; administrators always see costs',
      ),
      hide_for_serviceowners: bool('While ENABLED: hide costs from service owners'),
      hide_for_consumers: bool('While ENABLED: hide costs from consumers'),
      only_admins_can_see: bool('While ENABLED: only administrators see costs'),
    },
    defaults: {
      ENABLED: false,
      hide_for_serviceowners: false,
      hide_for_consumers: false,
      only_admins_can_see: false,
    },
  }),
  submission_builder: defineGroup({
    label: 'Submission Builder',
    fields: {
      show_submission_builder: bool('Show the submission builder'),
      enable_submit_functionality: bool(
        'Consumers may submit declarations; off refuses every submission (403), through the builder or the API',
      ),
      default_allow_submit_submission_builder: bool('New services allow builder submissions by default'),
    },
    defaults: {
      show_submission_builder: true,
      enable_submit_functionality: true,
      default_allow_submit_submission_builder: true,
    },
  }),
  service_creator: defineGroup({
    label: 'Service Creator',
    fields: {
      show_create_service_option: bool('Show the create-service option'),
      allow_service_creation: bool('Allow creating services'),
      default_allow_service_creation: bool('New users may create services by default'),
    },
    defaults: {
      show_create_service_option: true,
      allow_service_creation: true,
      default_allow_service_creation: true,
    },
  }),
  ai_integration: defineGroup({
    label: 'AI Integration',
    fields: {
      show_ai_validator: bool(
        'AI switch (default on): the Change Instance Validator decides new Change Instances of Services with an active validator. Off, it asks and decides nothing: Change Instances wait for a person; a decision already asked for still applies',
      ),
      show_ai_processor: bool(
        'AI switch (default on): AI processors run. Off, no AI stage starts (config, verify, execution, Universal Executor) and no Pack Optimizer is asked: a trigger or retrigger is 409 naming show_ai_processor, an approval stores the run with no stage started and the reason as the CONFIG error, a stage ending OK or pushed PackData leaves the next stage not started with the reason; pushing PackData still works and a stage already sent finishes',
      ),
      show_ai_integration: bool(
        'Derived: true when any AI feature is enabled (show_ai_validator or show_ai_processor); shows the AI Integration dashboard and AI processors pages; never written',
      ),
      generative_ui_catalog_schema: catalogSchemaValue.describe(
        'Generative UI Catalog Schema (draft-07 JSON Schema); null until generated, meaning the registry default applies',
      ),
    },
    defaults: {
      show_ai_validator: true,
      show_ai_processor: true,
      show_ai_integration: true,
      generative_ui_catalog_schema: null,
    },
    writeTypes: { generative_ui_catalog_schema: catalogSchemaWrite },
  }),
  gui_table: defineGroup({
    label: 'GUI Table Settings',
    fields: {
      ENABLED: bool('Tables refresh automatically'),
      table_refresh_interval: z
        .number()
        .int('must be a whole number')
        .min(5, 'must be at least 5 seconds')
        .max(3600, 'must be at most 3600 seconds')
        .describe('Auto-refresh interval in seconds'),
      default_filter_states_for_consumers: stateFilter(
        'Change Instance states pre-selected for consumers; empty means all',
      ),
      default_filter_states_for_serviceowners: stateFilter(
        'Change Instance states pre-selected for service owners; empty means all',
      ),
    },
    defaults: {
      ENABLED: true,
      table_refresh_interval: 30,
      default_filter_states_for_consumers: [],
      default_filter_states_for_serviceowners: ['PENDING'],
    },
  }),
  global_banner: defineGroup({
    label: 'Global Banner',
    fields: { ENABLED: bool('Show the banner'), message: text('Text shown to all users', 2000) },
    defaults: { ENABLED: false, message: '' },
  }),
  external_api: defineGroup({
    label: 'External API Settings',
    fields: {
      healthcheck_rate_limit_per_minute: perMinute('Healthcheck requests per minute per client'),
      healthcheck_response_rate_limit: perMinute('Healthcheck response reads per minute per client'),
      webhook_rate_limit_per_minute: perMinute(
        'Webhook fires per minute per webhook; later fires are delayed, never dropped',
      ),
      webhook_response_rate_limit: perMinute('Webhook response reads per minute per client'),
      webhook_response_retention: z
        .number()
        .int('must be a whole number')
        .min(1, 'must be at least 1')
        .max(100_000, 'must be at most 100000')
        .describe(
          'Webhook responses kept per webhook, the newest; lowering it removes the older ones within one sweep of the dispatcher',
        ),
    },
    defaults: {
      healthcheck_rate_limit_per_minute: 60,
      healthcheck_response_rate_limit: 60,
      webhook_rate_limit_per_minute: 60,
      webhook_response_rate_limit: 120,
      webhook_response_retention: 100,
    },
  }),
};
