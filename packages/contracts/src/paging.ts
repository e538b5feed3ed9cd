/** One page of a list as the stores and use cases return it (the API answers `{count, results}`). */
export interface Page<T> {
  /** Every match, not only this page. */
  count: number;
  items: T[];
}
