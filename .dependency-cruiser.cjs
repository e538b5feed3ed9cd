/**
 * `pnpm check:folders` (part of `pnpm check`): no folder of a service's or package's src may
 * import a folder that imports it back, directly or round a ring (`domain/pipelines` ->
 * `domain/stage-results` -> `domain/pipelines`). madge (`pnpm check:cycles`) sees file circles
 * only; two folders can tangle without any file circle.
 *
 * The console (packages/console/src: pages, components, gen-ui) is a front end bundled on its
 * own and is not checked here.
 */

/**
 * Folder tangles allowed for now: pairs of folders that may import each other until untangled.
 * The four of the orchestrator's domain the check found when it came in are untangled;
 * keep it empty. Never add a pair: untangle the folders instead.
 */
const KNOWN_FOLDER_TANGLES = [];

const CHECKED = '^(services/[^/]+|packages/(?!console/)[^/]+)/src(/|$)';
const exactly = (folders) =>
  `^(${folders.map((folder) => folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$`;

/** The folders of the known tangles, each with the folders it may still tangle with. */
const partners = new Map();
for (const [one, other] of KNOWN_FOLDER_TANGLES) {
  partners.set(one, [...(partners.get(one) ?? []), other]);
  partners.set(other, [...(partners.get(other) ?? []), one]);
}

const comment =
  'This folder imports a folder that imports it back (the path shows the ring): move what both need ' +
  'into a folder below both, or invert the dependency (docs/decisions/0001).';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycles',
      comment,
      scope: 'folder',
      severity: 'error',
      from: { path: CHECKED, ...(partners.size > 0 ? { pathNot: exactly([...partners.keys()]) } : {}) },
      to: { circular: true },
    },
    // A folder of a known tangle may import its listed partners, and no other folder round a ring.
    ...[...partners].map(([folder, allowed]) => ({
      name: 'no-folder-cycles',
      comment: `${comment} Known tangles of ${folder}: ${allowed.join(', ')} (KNOWN_FOLDER_TANGLES).`,
      scope: 'folder',
      severity: 'error',
      from: { path: exactly([folder]) },
      to: { circular: true, pathNot: exactly(allowed) },
    })),
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.(spec|test)\\.ts$' },
  },
};
