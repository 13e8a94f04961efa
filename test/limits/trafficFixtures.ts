/** Traffic settings for tests: the defaults, a block list inside the test's site, and the overrides given. */
import path from "node:path";
import { resolveTraffic, type TrafficSettings } from "../../src/server/limits/trafficConfig.ts";
import type { Site } from "../server/serverFixtures.ts";

export function trafficFor(site: Site, overrides: Partial<TrafficSettings> = {}): TrafficSettings {
  // Refusals answered at once (the hold has its own test): tests wait for nothing.
  return { ...resolveTraffic(undefined, {}), blockList: path.join(site.root, "blocklist.json"), holdRefusalsMs: 0, ...overrides };
}

export const limit = (ratePerSecond: number, burst: number) => ({ ratePerSecond, burst });
/** A rate so slow that nothing refills while a test runs: only the burst counts. */
export const burstOnly = (burst: number) => limit(0.001, burst);
export const UA = { "user-agent": "ashcast-test/1 ops@example.org" } as const;
