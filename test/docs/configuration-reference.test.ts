import { readFileSync } from 'node:fs';
import { CONFIG_REFERENCE_FILE, renderConfigReference } from '../../scripts/generate-config-reference';

/** The configuration reference is generated from the services' env schemas, so it says what they read. */
describe('docs/reference/configuration.md', () => {
  it("is what the services' config schemas render now (else run `pnpm docs:config`)", () => {
    const committed = readFileSync(CONFIG_REFERENCE_FILE, 'utf8').split('\n');
    const current = renderConfigReference().split('\n');
    // A stale page fails with the first line that differs, not a diff of the whole table.
    const first = current.findIndex((line, index) => line !== committed[index]);
    expect({ line: first + 1, expected: current[first] }).toEqual({ line: 0, expected: undefined });
    expect(committed.length).toBe(current.length);
  });

  it('lists every variable of every service, with its default', () => {
    const page = renderConfigReference();
    for (const name of [
      'PACK_INTERNAL_SECRET',
      'GATEWAY_PORT',
      'WEBHOOK_LOOKUP_CACHE_MS',
      'RECORD_LINGER_MS',
    ])
      expect(page).toContain(`| \`${name}\``);
    expect(page).toMatch(/\| `LLM_CALL_LEASE_MS` +\| `15000` +\| integer 300\.\.600000 +\| llm-gateway +\|/);
  });
});
