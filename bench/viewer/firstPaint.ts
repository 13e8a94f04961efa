/**
 * First paint of the viewer on the latest sample run, over loopback, in Debian's chromium (headless):
 * from navigation start to the first contentful paint, to the latest run's ash drawn (the viewer's
 * `ash-drawn` mark, taken in the animation frame Leaflet draws it in) and to the coastlines drawn.
 * Cold: the browser cache disabled on every load (every byte fetched again); warm: cache on, a reload.
 * Median and maximum of N loads; the figures go to docs/benchmarks.md.
 *   npm run bench:viewer -- [N]
 */
import { cpus, loadavg } from "node:os";
import { launchBrowser } from "../../test/viewer/browser.ts";
import { startSampleSite } from "../../test/viewer/sampleSite.ts";
import { writeDocsSection } from "../docsSection.ts";

const N = Number(process.argv[2] ?? 15);
const HEADING = "## Viewer: first paint of the latest run";

interface Load {
  fcp: number;
  ash: number;
  coast: number;
  bytes: number;
  requests: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const loadBefore = loadavg()[0]!;
const sample = await startSampleSite();
const browser = await launchBrowser();
const results: Record<"cold" | "warm", Load[]> = { cold: [], warm: [] };
try {
  for (const mode of ["cold", "warm"] as const) {
    const page = await browser.context.newPage();
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.setCacheDisabled", { cacheDisabled: mode === "cold" });
    // Bytes on the wire (headers and compressed bodies), as the browser's network layer counts them.
    let wire = 0;
    cdp.on("Network.loadingFinished", (event: { encodedDataLength: number }) => (wire += event.encodedDataLength));
    await page.goto(sample.viewerUrl); // warms the server's body cache (and, when warm, the browser's)
    for (let i = 0; i < N; i++) {
      wire = 0;
      await page.goto(`${sample.viewerUrl}?load=${i}`);
      await page.waitForFunction("performance.getEntriesByName('ash-drawn').length && performance.getEntriesByName('coastlines-drawn').length", undefined, { timeout: 30_000 });
      const load = await page.evaluate<Omit<Load, "bytes">>(`(() => {
          const at = (name) => performance.getEntriesByName(name)[0].startTime;
          return { fcp: at("first-contentful-paint"), ash: at("ash-drawn"), coast: at("coastlines-drawn"), requests: performance.getEntriesByType("resource").length + 1 };
        })()`);
      results[mode].push({ ...load, bytes: wire });
    }
    await page.close();
  }
} finally {
  await browser.close();
  await sample.close();
}

const row = (mode: "cold" | "warm") => {
  const loads = results[mode];
  const cell = (key: keyof Load) => `${median(loads.map((l) => l[key])).toFixed(0)} (max ${Math.max(...loads.map((l) => l[key])).toFixed(0)})`;
  return `| ${mode} | ${cell("fcp")} | ${cell("ash")} | ${cell("coast")} | ${median(loads.map((l) => l.requests))} | ${(median(loads.map((l) => l.bytes)) / 1024).toFixed(0)} |`;
};
const section = `${HEADING}

\`npm run bench:viewer -- ${N}\` on ${new Date().toISOString().slice(0, 10)}, ${cpus().length} CPUs shared with other work (load average
${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after: the spread comes from there), Node ${process.version},
Debian chromium headless (software rendering), the three sample runs served by \`startServer\` on 127.0.0.1,
viewport 1280×800. Milliseconds from navigation start, median (max) of ${N} loads; KiB on the wire (brotli bodies and headers;
a warm load revalidates nothing within max-age, so it fetches only what is not cached).

| browser cache | first contentful paint | latest run's ash drawn | coastlines drawn | requests | KiB |
|---|---|---|---|---|---|
${row("cold")}
${row("warm")}

The target is the ash of the latest run drawn under 1 s on loopback. The page, the script (Leaflet and
ours, one file) and the style sheet come first; the run's JSON, the reftimes and the first step's KML
follow in parallel with the coastlines (Natural Earth 1:50M land, the largest transfer), which are
fetched at once but drawn after the first ash (projecting 100,000 points would otherwise hold the
main thread before it: 641 → 375 ms median for the ash, cold, at the same load).
`;
writeDocsSection(HEADING, section);
console.log(section);
