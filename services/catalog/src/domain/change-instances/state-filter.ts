import {
  CHANGE_INSTANCE_STATES,
  type ChangeInstanceState,
  type GeneralSettings,
  type Role,
} from '@pack/contracts';

export const ALL_STATES_KEYWORD = 'ALL';

export interface StateFilter {
  /** null: every state. */
  states: ChangeInstanceState[] | null;
  /** Where the filter came from: the request, or the GUI Table Settings default for the caller's role. */
  source: 'request' | 'default';
}

/**
 * The state filter of the Change Instance list. A request that names states (`?state=PENDING,APPROVED`,
 * or `?state=ALL` for every state) gets exactly those. Otherwise the GUI Table Settings default
 * for the caller's role applies: consumers get default_filter_states_for_consumers, service
 * owners default_filter_states_for_serviceowners; an empty default means every state. Admins
 * have no default (the settings name none for them).
 */
export function resolveStateFilter(
  requested: readonly string[] | undefined,
  role: Role,
  gui: GeneralSettings['gui_table'],
): StateFilter {
  if (requested && requested.length > 0) {
    if (requested.includes(ALL_STATES_KEYWORD)) return { states: null, source: 'request' };
    return { states: [...new Set(requested as ChangeInstanceState[])], source: 'request' };
  }
  const defaults =
    role === 'consumer'
      ? gui.default_filter_states_for_consumers
      : role === 'service_owner'
        ? gui.default_filter_states_for_serviceowners
        : [];
  return { states: defaults.length > 0 ? [...defaults] : null, source: 'default' };
}

/** `?state=` as sent: repeated and/or comma-separated; every value a state or ALL. */
export function parseStateParameter(raw: string | string[] | undefined): {
  states?: string[];
  invalid: string[];
} {
  if (raw === undefined) return { invalid: [] };
  const values = (Array.isArray(raw) ? raw : [raw])
    .flatMap((value) => value.split(','))
    .map((value) => value.trim().toUpperCase())
    .filter(Boolean);
  const known = new Set<string>([...CHANGE_INSTANCE_STATES, ALL_STATES_KEYWORD]);
  return { states: values, invalid: values.filter((value) => !known.has(value)) };
}
