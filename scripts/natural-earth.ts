/** Writes src/render/natural-earth-<resolution>.bin from world-atlas's TopoJSON (a test fails when one is stale). */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { Topology } from "topojson-specification";
import { encodeNaturalEarth } from "../src/render/naturalEarthData.ts";

export const RESOLUTIONS = ["50m", "110m"] as const;
export const naturalEarthPath = (resolution: string): string => fileURLToPath(new URL(`../src/render/natural-earth-${resolution}.bin`, import.meta.url));

const topology = (file: string): Topology => JSON.parse(readFileSync(createRequire(import.meta.url).resolve(`world-atlas/${file}`), "utf8")) as Topology;

/** The file's bytes as world-atlas (the installed version) gives them. */
export const naturalEarthBytes = (resolution: string): Uint8Array => encodeNaturalEarth(topology(`land-${resolution}.json`), topology(`countries-${resolution}.json`));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const resolution of RESOLUTIONS) {
    writeFileSync(naturalEarthPath(resolution), naturalEarthBytes(resolution));
    process.stdout.write(`wrote ${naturalEarthPath(resolution)}\n`);
  }
}
