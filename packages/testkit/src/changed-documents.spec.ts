import { changedDocuments } from './outbox';

describe('changedDocuments', () => {
  it('is empty when two dumps hold the same documents', () => {
    const dump = () => ({ pipelines: [{ _id: 1, watched: false }], notes: [] });
    expect(changedDocuments(dump(), dump())).toEqual({});
  });

  it('names each changed, added or removed document with what it was and became, and no other', () => {
    const before = {
      pipelines: [
        { _id: 1, watched: true },
        { _id: 2, watched: false },
      ],
      old: [{ _id: 'a' }],
    };
    const after = { pipelines: [{ _id: 1, watched: false }, { _id: 2, watched: false }, { _id: 3 }] };
    expect(changedDocuments(before, after)).toEqual({
      pipelines: [
        { _id: '1', before: { _id: 1, watched: true }, after: { _id: 1, watched: false } },
        { _id: '3', before: null, after: { _id: 3 } },
      ],
      old: [{ _id: 'a', before: { _id: 'a' }, after: null }],
    });
  });
});
