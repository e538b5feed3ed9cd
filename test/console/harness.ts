/**
 * The console in a real browser: Debian's Chromium driven by playwright-core (headless, no
 * sandbox, no background networking, a fresh profile), against a test stack whose gateway serves
 * the console build. A browser that does not start fails the test; nothing here skips.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Clock, type Page } from 'playwright-core';
import { CONSOLE_PAGES, ensureConsoleBuilt } from '@pack/console';
import { currentTest, isStaticAsset, recordForScan } from '@pack/testkit';
import { startStack, type Stack, type StackOptions } from '../stack';
import { PAGE_SCREENSHOTS, pageSourcesHash, SCREENSHOTS, stampedPng, stampOf } from './screenshot-paths';

export const CHROMIUM = '/usr/bin/chromium';
export { SCREENSHOTS, PAGE_SCREENSHOTS };
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const AXE_SOURCE = () => readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface Harness {
  stack: Stack;
  page: Page;
  /** Messages the browser logged about the Content-Security-Policy (none expected). */
  cspViolations: string[];
  /** Page errors (uncaught exceptions) in the console's code. */
  pageErrors: string[];
  signIn(token: string, expectPath?: RegExp): Promise<void>;
  signOut(): Promise<void>;
  /** Signed in with `token`, whoever was signed in before (each test signs in as it needs). */
  signInAs(token: string, expectPath?: RegExp): Promise<void>;
  /**
   * Runs `body` with the general settings patched (group -> fields), then patches back what
   * those fields held before, whatever `body` did (a write-only field: the value in `patch`).
   */
  withSettings(patch: Record<string, Record<string, unknown>>, body: () => Promise<void>): Promise<void>;
  /** Opens a console path and waits for its main heading. */
  open(pathname: string, heading: string | RegExp): Promise<void>;
  /** axe-core on the page as it is: the serious and critical violations (expected: none). */
  axe(): Promise<{ id: string; impact: string; help: string; nodes: string[] }[]>;
  screenshot(name: string, options?: { fullPage?: boolean }): Promise<string>;
  /** Turns AI processors and the Change Instance Validator on, so the AI pages and every processor kind are shown. */
  showAiIntegration(): Promise<void>;
  /** No CSP report and no uncaught error in the page so far (after every test). */
  expectNoBrowserProblems(): void;
  /** Marks the loaded page, so pageStayed() tells whether it was reloaded or left since. */
  markPage(): Promise<void>;
  pageStayed(): Promise<boolean>;
  /**
   * The browser's clock, faked from the first call on (Playwright's clock: time goes on as it
   * does, and a test moves it to a page's next refresh instead of waiting the refresh out). Take
   * it before opening the page whose timers it moves.
   */
  pageClock(): Promise<Clock>;
  close(): Promise<void>;
}

export async function startConsole(options: StackOptions = {}): Promise<Harness> {
  ensureConsoleBuilt();
  mkdirSync(SCREENSHOTS, { recursive: true });
  mkdirSync(PAGE_SCREENSHOTS, { recursive: true });
  const profile = mkdtempSync(path.join(tmpdir(), 'console-chromium-'));
  const stack = await startStack(options);
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1280, height: 800 },
      locale: 'en-GB',
      timezoneId: 'UTC',
    });
  } catch (error) {
    await stack.stop();
    rmSync(profile, { recursive: true, force: true });
    throw new Error(
      `Chromium did not start from ${CHROMIUM} (scripts/deps.sh installs it): ${String(error)}`,
    );
  }
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(15_000);
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];
  page.on('console', (message) => {
    if (/Content[- ]Security[- ]Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  // What the browser receives from the API counts for the suite-wide leak scan like any response.
  context.on('response', (response) => {
    const request = response.request();
    if (!new URL(response.url()).pathname.startsWith('/v1/')) return;
    const contentType = response.headers()['content-type'] ?? '';
    if (contentType.includes('text/event-stream') || isStaticAsset(contentType)) return;
    const test = currentTest();
    void response
      .text()
      .then((body) =>
        recordForScan('responses', {
          ...test,
          caller: 'the console in the browser',
          method: request.method(),
          url: response.url(),
          status: response.status(),
          body,
        }),
      )
      .catch(() => undefined);
  });
  const url = (pathname: string) => `${stack.gateway}${pathname}`;
  let clockInstalled = false;

  const harness: Harness = {
    stack,
    page,
    cspViolations,
    pageErrors,
    async signIn(token, expectPath = /\/(dashboard|models|change-instances)/) {
      await page.goto(url('/sign-in'));
      await page.getByLabel('API token', { exact: true }).fill(token);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(expectPath);
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
    },
    async signOut() {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/sign-in/);
    },
    async signInAs(token, expectPath) {
      if (await page.getByRole('button', { name: 'Sign out' }).isVisible()) await harness.signOut();
      await harness.signIn(token, expectPath);
    },
    async withSettings(patch, body) {
      const SETTINGS = '/v1/core/general_settings/';
      const before = (await stack.call('GET', SETTINGS)).body;
      expect((await stack.call('PATCH', SETTINGS, { body: patch })).status).toBe(200);
      try {
        await body();
      } finally {
        const restore = Object.fromEntries(
          Object.entries(patch).map(([group, fields]) => [
            group,
            // A write-only field (CLIENT_SECRET) is not in what GET shows: it goes back to `patch`'s value.
            Object.fromEntries(
              Object.entries(fields).map(([field, value]) => [
                field,
                field in before[group] ? before[group][field] : value,
              ]),
            ),
          ]),
        );
        expect((await stack.call('PATCH', SETTINGS, { body: restore })).status).toBe(200);
      }
    },
    async open(pathname, heading) {
      await page.goto(url(pathname));
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    },
    async axe() {
      // The page's CSP allows no injected <script>: axe goes in through the DevTools protocol.
      if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE_SOURCE());
      const result: any = await page.evaluate(() =>
        (globalThis as any).axe.run((globalThis as any).document),
      );
      return (result.violations as any[])
        .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
        .map((violation) => ({
          id: violation.id,
          impact: violation.impact,
          help: violation.help,
          nodes: violation.nodes.map((node: { target: string[] }) => node.target.join(' ')),
        }));
    },
    async screenshot(name, { fullPage = true } = {}) {
      const file = path.join(SCREENSHOTS, `${name}.png`);
      const png = await page.screenshot({ path: file, fullPage });
      // A page's picture for the guides says which page sources it shows (page-screenshots.test.ts).
      // Taken again only when the page's sources changed, so a test run leaves the tree clean;
      // written aside and renamed: page-screenshots.test.ts may read it in the other jest worker.
      const picture = path.join(PAGE_SCREENSHOTS, `${name}.png`);
      const sources = pageSourcesHash();
      if (Object.hasOwn(CONSOLE_PAGES, name) && stampOfFile(picture) !== sources) {
        writeFileSync(`${picture}.${process.pid}.tmp`, stampedPng(png, sources));
        renameSync(`${picture}.${process.pid}.tmp`, picture);
      }
      return file;
    },
    async showAiIntegration() {
      const patched = await stack.call('PATCH', '/v1/core/general_settings/', {
        body: { ai_integration: { show_ai_processor: true, show_ai_validator: true } },
      });
      expect(patched.status).toBe(200);
    },
    expectNoBrowserProblems() {
      expect({ csp: cspViolations, errors: pageErrors }).toEqual({ csp: [], errors: [] });
    },
    async markPage() {
      await page.evaluate(() => ((globalThis as any).consoleTestMark = true));
    },
    async pageStayed() {
      return page.evaluate(() => (globalThis as any).consoleTestMark === true);
    },
    async pageClock() {
      if (!clockInstalled) await context.clock.install();
      clockInstalled = true;
      return context.clock;
    },
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
      await stack.stop();
    },
  };
  return harness;
}

/** The violations of one page, checked and named, so a failure says which page. */
export async function expectAccessible(harness: Harness, pageName: string): Promise<void> {
  expect({ page: pageName, violations: await harness.axe() }).toEqual({ page: pageName, violations: [] });
}

const stampOfFile = (file: string) => (existsSync(file) ? stampOf(readFileSync(file)) : null);
