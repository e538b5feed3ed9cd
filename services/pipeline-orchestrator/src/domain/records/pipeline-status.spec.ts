import { statusAfter } from './pipeline-records';

describe('statusAfter: where a run is, by the stage a write moves (docs/decisions/0042)', () => {
  it('names the last stage, in stage order, whose state the write sets', () => {
    expect(statusAfter({ CONFIG: { state: 'SCHEDULED' } })).toBe('running');
    expect(statusAfter({ VERIFY: { state: 'WAITING_FOR_RESPONSE' } })).toBe('running');
    expect(statusAfter({ VERIFY: { state: 'FAILED' } })).toBe('failed');
    expect(statusAfter({ CONFIG: { state: 'OK' } })).toBe('waiting');
    expect(statusAfter({ EXECUTION: { state: 'OK' } })).toBe('done');
    // A result that ends CONFIG and starts VERIFY in one write: VERIFY is where the run is.
    expect(statusAfter({ CONFIG: { state: 'OK' }, VERIFY: { state: 'SCHEDULED' } })).toBe('running');
  });

  it('leaves the status alone when the write sets no state', () => {
    expect(statusAfter({})).toBeNull();
    expect(statusAfter({ VERIFY: { late_result: null } })).toBeNull();
    expect(statusAfter({ CONFIG: { state: null } })).toBeNull();
  });

  it('is the outcome of a write that ends the run, at whichever stage (docs/decisions/0056)', () => {
    // A Service with only a config processor: CONFIG OK is the end of a COMPLETED run.
    expect(statusAfter({ CONFIG: { state: 'OK' } }, 'COMPLETED')).toBe('done');
    expect(statusAfter({ VERIFY: { state: 'OK' } }, 'COMPLETED')).toBe('done');
    // PackData pushed into EXECUTION past the retrigger bound: the stage is OK, the run FAILED.
    expect(statusAfter({ EXECUTION: { state: 'OK' } }, 'FAILED')).toBe('failed');
    expect(statusAfter({ CONFIG: { state: 'OK' } }, null)).toBe('waiting');
  });
});
