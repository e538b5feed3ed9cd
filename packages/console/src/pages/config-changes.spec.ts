import { configChanges } from './config-changes';

describe('what changed between two configurations', () => {
  it('names each changed, added and removed leaf by its path', () => {
    expect(
      configChanges(
        { disk: 500, vm: { flavor: 'c2', zones: ['a'] }, backup: 'daily' },
        { disk: 250, vm: { flavor: 'c2', zones: ['a', 'b'] }, region: 'eu' },
      ),
    ).toEqual([
      'disk: 500 → 250',
      'vm.zones: ["a"] → ["a","b"]',
      'backup: removed (was "daily")',
      'region: added "eu"',
    ]);
  });

  it('says nothing when nothing changed, and compares non-objects whole', () => {
    expect(configChanges({ a: 1 }, { a: 1 })).toEqual([]);
    expect(configChanges([1], [2])).toEqual(['(whole): [1] → [2]']);
    expect(configChanges(null, { a: 1 })).toEqual(['(whole): null → {"a":1}']);
  });
});
