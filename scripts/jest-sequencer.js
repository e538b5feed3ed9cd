const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const HEAVY = require('./jest-heavy-files.json');

const REPO = path.resolve(__dirname, '..');
/** A file this long or longer starts before the files jest knows nothing about. */
const HEAVY_SECONDS = 20;

/**
 * Jest's own order, with the known-heavy files of jest-heavy-files.json first. Jest starts the
 * files that took longest first, but only with the timings of an earlier run in its cache; a
 * fresh clone (CI) has none, and jest then orders by file size, so a file that runs for minutes
 * may start last and keep one worker busy while the other sits idle. Here a file's time is
 * jest's own when it has one, else the list's estimate. The order: files that failed last time,
 * then those of 20 s or more (longest first), then files with no time (largest first, as jest
 * does), then the rest (longest first).
 */
class HeavyFirstSequencer extends Sequencer {
  sort(tests) {
    const size = (test) => test.context.hasteFS.getSize(test.path) ?? 0;
    const seconds = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached / 1000;
      return HEAVY[path.relative(REPO, test.path).split(path.sep).join('/')];
    };
    const failed = [];
    const heavy = [];
    const unknown = [];
    const rest = [];
    for (const test of tests) {
      const time = seconds(test);
      test.duration = time == null ? undefined : time * 1000;
      if (this.hasFailed(test)) failed.push(test);
      else if (time == null) unknown.push(test);
      else (time >= HEAVY_SECONDS ? heavy : rest).push(test);
    }
    const longest = (a, b) => (b.duration ?? 0) - (a.duration ?? 0);
    return [
      ...failed.sort(longest),
      ...heavy.sort(longest),
      ...unknown.sort((a, b) => size(b) - size(a)),
      ...rest.sort(longest),
    ];
  }
}

module.exports = HeavyFirstSequencer;
