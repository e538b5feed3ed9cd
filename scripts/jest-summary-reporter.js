const { writeSync } = require('node:fs');

/**
 * Prints one plain closing line, "N passed, N failed" (", N skipped"), as the very last line of
 * the run (after jest's own summary), so that any CI can read the outcome without knowing jest.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `${results.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
    // A failure after the tests (the global teardown's leak scan) is said too.
    process.once('exit', (code) =>
      writeSync(1, `${line}${code && !failed ? ', run failed after the tests' : ''}\n`),
    );
  }
}

module.exports = SummaryReporter;
