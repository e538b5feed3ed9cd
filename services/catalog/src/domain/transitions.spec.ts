import { CHANGE_INSTANCE_STATES } from '@pack/contracts';
import { checkTransition, legalTransitions, TRANSITIONS } from './transitions';

const owner = { kind: 'user' as const, userId: 7, username: 'olivia' };

describe('change instance transitions', () => {
  it('has a row for every state, and final states have no way out', () => {
    expect(Object.keys(TRANSITIONS).sort()).toEqual([...CHANGE_INSTANCE_STATES].sort());
    for (const state of ['REJECTED', 'COMPLETED', 'CANCELLED'] as const)
      expect(TRANSITIONS[state]).toEqual([]);
  });

  it.each(legalTransitions())('lets the owner move %s -> %s', (from, to) => {
    expect(checkTransition(from, to, owner)).toEqual({ ok: true });
  });

  it('refuses every pair outside the table, naming both states', () => {
    const legal = new Set(legalTransitions().map(([from, to]) => `${from}>${to}`));
    let refused = 0;
    for (const from of CHANGE_INSTANCE_STATES) {
      for (const to of CHANGE_INSTANCE_STATES) {
        if (legal.has(`${from}>${to}`)) continue;
        const check = checkTransition(from, to, owner);
        expect(check).toMatchObject({ ok: false, reason: 'illegal' });
        expect(check.ok ? '' : check.detail).toContain(`from ${from} to ${to}`);
        refused += 1;
      }
    }
    expect(refused).toBe(49 - legal.size);
  });

  it('lets the validator and auto-approval only decide a PENDING instance', () => {
    for (const kind of ['validator', 'auto_approval'] as const) {
      expect(checkTransition('PENDING', 'APPROVED', { kind })).toEqual({ ok: true });
      expect(checkTransition('PENDING', 'REJECTED', { kind })).toEqual({ ok: true });
      expect(checkTransition('PENDING', 'CANCELLED', { kind })).toMatchObject({
        ok: false,
        reason: 'illegal',
      });
      expect(checkTransition('APPROVED', 'REJECTED', { kind })).toMatchObject({
        ok: false,
        reason: 'already_decided',
      });
    }
  });
});
