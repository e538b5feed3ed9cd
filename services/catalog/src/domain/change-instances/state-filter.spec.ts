import { defaultGeneralSettings } from '@pack/contracts';
import { parseStateParameter, resolveStateFilter } from './state-filter';

const gui = {
  ...defaultGeneralSettings().gui_table,
  default_filter_states_for_consumers: ['PENDING', 'APPROVED'] as const,
  default_filter_states_for_serviceowners: ['PENDING'] as const,
};
const settings = {
  ...gui,
  default_filter_states_for_consumers: [...gui.default_filter_states_for_consumers],
  default_filter_states_for_serviceowners: [...gui.default_filter_states_for_serviceowners],
};

describe('change instance state filter', () => {
  it('uses the states a request names, whoever asks', () => {
    expect(resolveStateFilter(['REJECTED'], 'consumer', settings)).toEqual({
      states: ['REJECTED'],
      source: 'request',
    });
    expect(resolveStateFilter(['ALL'], 'service_owner', settings)).toEqual({
      states: null,
      source: 'request',
    });
  });

  it('falls back to the GUI Table Settings default of the caller role', () => {
    expect(resolveStateFilter(undefined, 'consumer', settings)).toEqual({
      states: ['PENDING', 'APPROVED'],
      source: 'default',
    });
    expect(resolveStateFilter([], 'service_owner', settings)).toEqual({
      states: ['PENDING'],
      source: 'default',
    });
    expect(resolveStateFilter(undefined, 'admin', settings)).toEqual({ states: null, source: 'default' });
  });

  it('treats an empty default as every state', () => {
    expect(
      resolveStateFilter(undefined, 'consumer', { ...settings, default_filter_states_for_consumers: [] }),
    ).toEqual({
      states: null,
      source: 'default',
    });
  });

  it('reads repeated and comma-separated values and reports unknown ones', () => {
    expect(parseStateParameter(['pending,APPROVED', 'FAILED'])).toEqual({
      states: ['PENDING', 'APPROVED', 'FAILED'],
      invalid: [],
    });
    expect(parseStateParameter('DONE,PENDING')).toEqual({ states: ['DONE', 'PENDING'], invalid: ['DONE'] });
    expect(parseStateParameter(undefined)).toEqual({ invalid: [] });
  });
});
