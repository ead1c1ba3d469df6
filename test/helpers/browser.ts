// Headless Chromium from Debian (/usr/bin/chromium, installed by npm test's pretest),
// driven by playwright-core, which never downloads a browser of its own.
import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { AppOptions } from '../../src/http/app.js';
import { startApp, type LiveApp } from './live-app.js';

export const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

/** Where browser tests leave screenshots (git-ignored). */
export const OUTPUT_DIR = new URL('../../test-output/browser/', import.meta.url);

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (npm test's pretest does it)`);
  mkdirSync(OUTPUT_DIR, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
}

/** A page that records console errors and uncaught exceptions. */
export async function openPage(browser: Browser, url: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1180, height: 900 } });
  // Functions passed to page.evaluate are compiled by tsx (esbuild), which may
  // wrap them in its __name helper; the page needs a stand-in.
  await page.addInitScript({ content: 'globalThis.__name = (fn) => fn;' });
  // A Content-Security-Policy violation is an error of the page too.
  await page.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));",
  });
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(String(error)));
  await page.goto(url);
  return { page, errors };
}

export interface DemoSession {
  live: LiveApp;
  browser: Browser;
  page: Page;
  /** Console errors and uncaught exceptions of the page so far. */
  errors: string[];
}

/** Mocha hooks: a live app and Chromium with GET / open, for the tests of one describe. */
export function withDemoPage(options: AppOptions = {}): DemoSession {
  const session = {} as DemoSession;
  before(async () => {
    session.live = await startApp({ tokenRatePerMin: 0 }, options);
    session.browser = await launchChromium();
    Object.assign(session, await openPage(session.browser, `${session.live.url}/`));
  });
  after(async () => {
    await session.browser?.close();
    await session.live?.close();
  });
  return session;
}
