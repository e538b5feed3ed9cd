const { writeSync } = require('node:fs');

/**
 * Prints one plain closing line, "N passed, N failed" (", N skipped"), as the very last line of
 * the run (after jest's own summary), so that any CI can read the outcome without knowing jest.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `${results.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`;
    process.once('exit', () => writeSync(1, line));
  }
}

module.exports = SummaryReporter;
