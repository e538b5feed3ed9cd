import { appendFileSync } from 'node:fs';
import { table, type CheckRow } from './checker';

/** The checker's rows of this test file, printed as one table when it ends. */
const rows: CheckRow[] = [];

/** Keeps a row for the table without judging it (a comparison run). */
export function recordRow(row: CheckRow): void {
  rows.push(row);
}

/** Keeps the row and expects it clean: everything ended OK, nothing repeated, left or lost. */
export function expectClean(row: CheckRow): void {
  rows.push(row);
  const timings = { durationS: 0, meanPipelineS: 0, slowestPipelineS: 0 };
  expect({ ...row, ...timings }).toEqual({
    ...row,
    ...timings,
    ok: row.submitted,
    failed: 0,
    stuck: 0,
    extraProviderCalls: 0,
    webhookDuplicates: 0,
    queuesNonEmpty: 0,
    lostWrites: 0,
    details: [],
  });
}

/**
 * Prints the file's table; bench/partitions runs several files and prints their rows as one
 * table after the run (PACK_PARTITION_ROWS: a file of JSON lines each file appends to).
 */
export function reportRows(): void {
  if (!rows.length) return;
  process.stdout.write(`\n${table(rows)}\n`);
  if (process.env.PACK_PARTITION_ROWS)
    appendFileSync(process.env.PACK_PARTITION_ROWS, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
}
