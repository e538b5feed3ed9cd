/** One page of a list as the stores and use cases return it (the API answers `{count, results}`). */
export interface Page<T> {
  /** Every match, not only this page. */
  count: number;
  items: T[];
}

/** One of the sort values of the last item seen: an id, a sequence number, a string id or a time. */
export type KeyPart = number | string | Date;

/**
 * Where a page starts: right after the item whose sort values are `after` (in the list's sort
 * order, `_id` last; the item need not exist any more), or after skipping `offset` matches, which
 * costs the database the skipped ones; with both, `offset` matches after the key.
 */
export type PageStart = { after?: readonly KeyPart[]; offset: number };
