/**
 * The bundled sample runs (`runs/`: a Real Eruption, an Exercise and a Rehearsal, with NetCDF-derived
 * plumes) copied into a temp site, built, and served on 127.0.0.1 port 0: what the viewer tests look at.
 */
import { cp } from "node:fs/promises";
import path from "node:path";
import { AshModel } from "../../src/contract/ashModel.ts";
import type { RunningServer } from "../../src/server/serve.ts";
import { buildSite, http, makeSite, serve, type Site } from "../server/serverFixtures.ts";

export const SAMPLES = {
  real: "2010-04-15T06:00:00Z",
  exercise: "2026-03-14T06:00:00Z",
  rehearsal: "2026-05-02T12:00:00Z",
} as const;

export interface SampleSite {
  site: Site;
  server: RunningServer;
  viewerUrl: string;
  close(): Promise<void>;
}

export async function startSampleSite(): Promise<SampleSite> {
  const site = await makeSite("ashcast-viewer-");
  await cp(path.resolve("runs"), site.runsDir, { recursive: true });
  const result = await buildSite(site);
  if (result.report.counts.published !== 3) throw new Error(`the sample runs did not all publish: ${JSON.stringify(result.report.runs)}`);
  const server = await serve(site);
  return {
    site,
    server,
    viewerUrl: `${server.url}/viewer/`,
    async close() {
      await server.close();
      await site.cleanup();
    },
  };
}

/** A run's AshModel, as the API serves it. */
export async function runModel(server: RunningServer, reftime: string): Promise<AshModel> {
  const res = await http(server, `/.json?reftime=${reftime}`);
  if (res.status !== 200) throw new Error(`/.json?reftime=${reftime} answered ${res.status}`);
  return AshModel.parse(res.json());
}

/** The text of a resource url of a run (`./resources?name=...`), as the API serves it. */
export async function resourceText(server: RunningServer, url: string): Promise<string> {
  const res = await http(server, url.replace(/^\./, ""));
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return res.text();
}
