import { CHANGE_INSTANCE_STATES, type ChangeInstanceState } from '@pack/contracts';
import { checkTransition, OPEN_STATES, pipelinePath, type Actor } from './transitions';

/** docs/decisions/0005, written out here: the test never reads the table it checks. */
const DECISION_0005: Record<ChangeInstanceState, ChangeInstanceState[]> = {
  PENDING: ['APPROVED', 'REJECTED', 'CANCELLED'],
  APPROVED: ['IN_PROGRESS', 'CANCELLED'],
  IN_PROGRESS: ['COMPLETED', 'FAILED', 'CANCELLED'],
  FAILED: ['IN_PROGRESS'],
  REJECTED: [],
  COMPLETED: [],
  CANCELLED: [],
};
const STATES = Object.keys(DECISION_0005) as ChangeInstanceState[];
const pairs = STATES.flatMap((from) =>
  STATES.map((to): [ChangeInstanceState, ChangeInstanceState] => [from, to]),
);

const owner: Actor = { kind: 'user', userId: 7, username: 'olivia', role: 'service_owner' };
const admin: Actor = { kind: 'user', userId: 1, username: 'ada', role: 'admin' };
const consumer: Actor = { kind: 'user', userId: 20, username: 'carla', role: 'consumer' };

describe('change instance transitions', () => {
  it('knows every state of the contract', () => {
    expect([...STATES].sort()).toEqual([...CHANGE_INSTANCE_STATES].sort());
  });

  it.each(pairs)('lets the owner and admins move %s -> %s exactly when decision 0005 has it', (from, to) => {
    const legal = DECISION_0005[from].includes(to);
    for (const actor of [owner, admin]) {
      const check = checkTransition(from, to, actor);
      if (legal) expect(check).toEqual({ ok: true });
      else {
        expect(check).toMatchObject({ ok: false, reason: 'illegal' });
        expect(check.ok ? '' : check.detail).toContain(`from ${from} to ${to}`);
      }
    }
  });

  it('names the way out of a state, or says it is final', () => {
    expect(checkTransition('PENDING', 'COMPLETED', owner)).toMatchObject({
      detail: expect.stringContaining('from PENDING it can move to APPROVED, REJECTED, CANCELLED'),
    });
    expect(checkTransition('REJECTED', 'APPROVED', owner)).toMatchObject({
      detail: expect.stringContaining('REJECTED is final'),
    });
  });

  it('lets a consumer only cancel, and only while PENDING', () => {
    expect(checkTransition('PENDING', 'CANCELLED', consumer)).toEqual({ ok: true });
    for (const [from, to] of pairs) {
      if (from === 'PENDING' && to === 'CANCELLED') continue;
      expect(checkTransition(from, to, consumer)).toMatchObject({
        ok: false,
        reason: to === 'CANCELLED' ? 'illegal' : 'not_allowed',
      });
    }
  });

  it('lets the validator and auto-approval only decide a PENDING instance', () => {
    for (const actor of [{ kind: 'validator' }, { kind: 'auto_approval' }] as const) {
      for (const [from, to] of pairs) {
        const check = checkTransition(from, to, actor);
        if (from === 'PENDING' && (to === 'APPROVED' || to === 'REJECTED'))
          expect(check).toEqual({ ok: true });
        else
          expect(check).toMatchObject({
            ok: false,
            reason: from === 'PENDING' ? 'illegal' : 'already_decided',
          });
      }
    }
  });

  it('counts as open the states with a way out', () => {
    expect([...OPEN_STATES].sort()).toEqual(['APPROVED', 'FAILED', 'IN_PROGRESS', 'PENDING']);
  });
});

describe('pipelinePath (docs/decisions/0026)', () => {
  it.each([
    ['APPROVED', 'IN_PROGRESS', ['IN_PROGRESS']],
    ['APPROVED', 'COMPLETED', ['IN_PROGRESS', 'COMPLETED']],
    ['APPROVED', 'FAILED', ['IN_PROGRESS', 'FAILED']],
    ['IN_PROGRESS', 'IN_PROGRESS', []],
    ['IN_PROGRESS', 'COMPLETED', ['COMPLETED']],
    ['IN_PROGRESS', 'FAILED', ['FAILED']],
    ['FAILED', 'IN_PROGRESS', ['IN_PROGRESS']],
    ['FAILED', 'COMPLETED', ['IN_PROGRESS', 'COMPLETED']],
    ['FAILED', 'FAILED', []],
    ['PENDING', 'IN_PROGRESS', null],
    ['COMPLETED', 'IN_PROGRESS', null],
    ['COMPLETED', 'FAILED', null],
    ['CANCELLED', 'IN_PROGRESS', null],
    ['REJECTED', 'COMPLETED', null],
  ] as const)('%s reaching %s passes %j', (from, to, path) => {
    expect(pipelinePath(from, to)).toEqual(path);
  });
});
