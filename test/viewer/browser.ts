/**
 * Debian's chromium, driven headless by playwright-core (never a downloaded browser), with a fresh
 * profile per launch, and a page that records every request it makes: the viewer must load with no
 * failed request and none leaving 127.0.0.1. Screenshots go to test-artifacts/viewer/.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { readPixels, type Pixels } from "../render/pixels.ts";

export const CHROMIUM = "/usr/bin/chromium";
/** Flags from ../shared/reference/dependencies.md: no GPU, no sandbox (root in CI), and no traffic of the browser's own. */
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export const ARTIFACTS_DIR = path.resolve("test-artifacts/viewer");

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run \`bash scripts/setup-test-env.sh\` (it installs Debian's chromium), as npm test does`);
  const profile = await mkdtemp(path.join(tmpdir(), "ashcast-chromium-"));
  // A persistent context is how playwright takes a user data dir of ours: a fresh, empty one.
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: FLAGS, viewport: { width: 1280, height: 800 } });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

export interface WatchedPage {
  page: Page;
  /** Every request url, in order. */
  requests: string[];
  /** Requests that failed (network error) or answered 400 or above, with why. */
  failures: string[];
  /** Console errors and uncaught exceptions of the page. */
  errors: string[];
}

export async function openPage(browser: Browser, viewport = { width: 1280, height: 800 }): Promise<WatchedPage> {
  const page = await browser.context.newPage();
  await page.setViewportSize(viewport);
  const watched: WatchedPage = { page, requests: [], failures: [], errors: [] };
  page.on("request", (request) => watched.requests.push(request.url()));
  page.on("requestfailed", (request) => watched.failures.push(`${request.url()}: ${request.failure()?.errorText ?? "failed"}`));
  page.on("response", (response) => {
    if (response.status() >= 400) watched.failures.push(`${response.url()}: HTTP ${response.status()}`);
  });
  page.on("console", (message) => {
    if (message.type() === "error") watched.errors.push(message.text());
  });
  page.on("pageerror", (error) => watched.errors.push(error.message));
  return watched;
}

/** Waits until the viewer has drawn this run, band and time (`data-drawn` on the body). */
export async function untilDrawn(page: Page, reftime: string, band: string, time: string): Promise<void> {
  const expected = `${reftime}|${band}|${time}`;
  // Expressions as strings: they run in the page, and the tests' types have no DOM.
  await page.waitForFunction(`document.body.dataset.drawn === ${JSON.stringify(expected)}`, undefined, { timeout: 20_000 });
}

/** A screenshot of the viewport saved as a test artefact, and its pixels. */
export async function screenshot(page: Page, name: string): Promise<Pixels> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const png = await page.screenshot({ path: path.join(ARTIFACTS_DIR, `${name}.png`) });
  return readPixels(png);
}

/** A screenshot with a ring drawn around a probed pixel (for people reading the artefacts; pixels are read without it). */
export async function screenshotWithProbe(page: Page, name: string, at: { x: number; y: number }): Promise<void> {
  const style = `position:fixed;left:${at.x - 9}px;top:${at.y - 9}px;width:14px;height:14px;border:2px solid #00e;border-radius:50%;z-index:9999;pointer-events:none`;
  await page.evaluate(`(() => { const ring = document.createElement("div"); ring.id = "test-probe"; ring.style.cssText = ${JSON.stringify(style)}; document.body.append(ring); })()`);
  await screenshot(page, name);
  await page.evaluate(`document.getElementById("test-probe").remove()`);
}

/** Where a longitude/latitude is on the page (CSS pixels), through the viewer's own map. */
export async function pagePoint(page: Page, lon: number, lat: number): Promise<{ x: number; y: number }> {
  return page.evaluate<{ x: number; y: number }>(`ashcastViewer.pagePoint(${lon}, ${lat})`);
}

/** Largest difference of one channel between two pixels. */
export function colourDistance(a: readonly number[], b: readonly number[]): number {
  return Math.max(...[0, 1, 2].map((i) => Math.abs(a[i]! - b[i]!)));
}
