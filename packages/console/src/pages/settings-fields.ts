/**
 * Every group and field of the general settings (spec 2.8) with its label. The map's type comes
 * from the API's PATCH body, so a group or field the API gains and the editor lacks fails to
 * compile. Pure (settings-fields.spec.ts).
 */
import type { Settings, SettingsPatch } from '../api/types';
import { asText } from '../text';

type Groups = Required<SettingsPatch>;
export type GroupName = keyof Groups;
type Labels = {
  [G in GroupName]: { title: string; fields: { [F in keyof NonNullable<Groups[G]>]-?: string } };
};

export const SETTINGS_LABELS: Labels = {
  ldap: {
    title: 'LDAP',
    fields: {
      ENABLED: 'Sign-in with LDAP',
      SERVER_URI: 'Server URI(s)',
      BIND_DN: 'Bind DN',
      BIND_PASSWORD: 'Bind password',
      USER_SEARCH_BASE_DN: 'User search base DN',
      GROUP_SEARCH_QUERY_BASE_DN: 'Group search base DN',
    },
  },
  smtp: {
    title: 'SMTP',
    fields: {
      ENABLED: 'Send mail',
      EMAIL_HOST: 'Host',
      EMAIL_PORT: 'Port',
      EMAIL_HOST_USER: 'User',
      EMAIL_HOST_PASSWORD: 'Password',
      EMAIL_USE_TLS: 'Use STARTTLS',
    },
  },
  feedback: {
    title: 'Feedback',
    fields: { ENABLED: 'Show the Feedback link', feedback_link: 'Feedback link (URL)' },
  },
  oauth: {
    title: 'Identity-provider OAuth (single sign-on)',
    fields: {
      ENABLED: 'Sign-in through the identity provider',
      CLIENT_ID: 'Client id',
      CLIENT_SECRET: 'Client secret (write-only)',
      ISSUER_URL: 'Issuer URL',
      REDIRECT_BASE_URL: 'Redirect base (public URL of the platform)',
    },
  },
  currency: {
    title: 'Currency',
    fields: { ENABLED: 'Show costs in the chosen currency', currency: 'Currency' },
  },
  charges: {
    title: 'Charges Settings',
    fields: {
      ENABLED: 'Hide costs by the rules below (off: everyone sees costs)',
      hide_for_serviceowners: 'Hide costs from service owners',
      hide_for_consumers: 'Hide costs from consumers',
      only_admins_can_see: 'Only administrators see costs',
    },
  },
  submission_builder: {
    title: 'Submission Builder',
    fields: {
      show_submission_builder: 'Show the submission builder',
      enable_submit_functionality: 'Allow submitting declarations (builder and API)',
      default_allow_submit_submission_builder: 'New Services allow builder submissions',
    },
  },
  service_creator: {
    title: 'Service Creator',
    fields: {
      show_create_service_option: 'Show the create-service option',
      allow_service_creation: 'Allow creating Services',
      default_allow_service_creation: 'New service owners may create Services',
    },
  },
  ai_integration: {
    title: 'AI Integration',
    fields: {
      show_ai_validator: 'Change Instance Validator decides (off: a person decides)',
      show_ai_processor: 'AI processors run (off: no AI stage starts)',
      show_ai_integration: 'AI Integration pages shown (calculated: either switch on)',
      generative_ui_catalog_schema: 'Generative UI catalog schema (JSON)',
    },
  },
  gui_table: {
    title: 'GUI Table Settings',
    fields: {
      ENABLED: 'Tables refresh automatically',
      table_refresh_interval: 'Refresh interval (seconds)',
      default_filter_states_for_consumers: 'Default states for consumers',
      default_filter_states_for_serviceowners: 'Default states for service owners',
    },
  },
  global_banner: { title: 'Global Banner', fields: { ENABLED: 'Show the banner', message: 'Message' } },
  external_api: {
    title: 'External API Settings',
    fields: {
      healthcheck_rate_limit_per_minute: 'Healthcheck requests per minute',
      healthcheck_response_rate_limit: 'Readiness reports per minute',
      webhook_rate_limit_per_minute: 'Webhook fires per minute',
      webhook_response_rate_limit: 'Webhook response reads per minute',
      webhook_response_retention: 'Webhook responses kept per webhook',
    },
  },
};

export const GROUPS = Object.keys(SETTINGS_LABELS) as GroupName[];

/** What a field does where its label cannot say it all (empty values and their defaults). */
export const SETTINGS_HINTS: Partial<Record<string, (value: FieldValue, origin: string) => string>> = {
  'oauth.ISSUER_URL': () =>
    "The gateway reads <issuer>/.well-known/openid-configuration. Empty: the gateway's OIDC_ISSUER_URL. https, or http to a provider on the gateway's own host; company networks are fine, link-local and cloud metadata addresses are refused.",
  'oauth.REDIRECT_BASE_URL': (value, origin) =>
    `Register ${typeof value === 'string' && value ? value.replace(/\/$/, '') : origin}/v1/core/auth/oidc/callback/ as the redirect URI at the identity provider. Empty: the gateway's PUBLIC_URL, else the address the browser used.`,
};
/** Stored encrypted and answered masked; CLIENT_SECRET is never answered at all. */
export const SECRET_FIELDS = new Set(['BIND_PASSWORD', 'EMAIL_HOST_PASSWORD', 'CLIENT_ID', 'CLIENT_SECRET']);
export const WRITE_ONLY = new Set(['CLIENT_SECRET']);
export const READ_ONLY = new Set(['show_ai_integration']);

export type FieldValue = string | number | boolean | string[] | null | Record<string, unknown>;
export type Draft = Record<string, Record<string, FieldValue>>;

/** What the editor starts from: the settings as read, secrets blank (typing one replaces it). */
export function draftOf(settings: Settings): Draft {
  const draft: Draft = {};
  for (const group of GROUPS) {
    const values = settings[group] as Record<string, FieldValue>;
    draft[group] = {};
    for (const field of Object.keys(SETTINGS_LABELS[group].fields))
      draft[group][field] = SECRET_FIELDS.has(field)
        ? ''
        : field === 'generative_ui_catalog_schema'
          ? JSON.stringify(values[field] ?? null, null, 2)
          : (values[field] ?? null);
  }
  return draft;
}

/** The PATCH body: only fields that changed, secrets only when typed; JSON text parsed. */
export function changesOf(
  before: Draft,
  after: Draft,
): { patch: Record<string, Record<string, unknown>>; errors: Record<string, string[]> } {
  const patch: Record<string, Record<string, unknown>> = {};
  const errors: Record<string, string[]> = {};
  for (const group of GROUPS)
    for (const [field, value] of Object.entries(after[group] ?? {})) {
      if (READ_ONLY.has(field) || JSON.stringify(value) === JSON.stringify(before[group]?.[field])) continue;
      if (SECRET_FIELDS.has(field) && value === '') continue;
      let sent: unknown = value;
      if (field === 'generative_ui_catalog_schema') {
        try {
          sent = JSON.parse(asText(value).trim() || 'null');
        } catch (error) {
          errors[`${group}.${field}`] = [`is not JSON: ${(error as Error).message}`];
          continue;
        }
      }
      (patch[group] ??= {})[field] = sent;
    }
  return { patch, errors };
}
