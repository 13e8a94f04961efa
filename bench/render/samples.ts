/** Writes sample renders to a folder (default /tmp/ashcast-render) to look at. */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { renderBandImage } from "../../src/render/bandImage.ts";
import { renderRunMap } from "../../src/render/runMap.ts";
import { EYJAFJALLAJOKULL, ICELAND_BOX, QUANTITY, THRESHOLDS, samplePlumeBands } from "../../test/render/plume.ts";

const out = process.argv[2] ?? "/tmp/ashcast-render";
mkdirSync(out, { recursive: true });
const common = { volcano: EYJAFJALLAJOKULL, reftime: "2010-04-14T06:00:00Z", box: ICELAND_BOX, thresholds: THRESHOLDS, quantity: QUANTITY };
for (const type of ["Exercise", "Rehearsal", "Real Eruption"] as const) {
  const png = await renderRunMap({ ...common, type, times: ["2010-04-14T06:00:00Z", "2010-04-15T06:00:00Z"], bands: samplePlumeBands() });
  writeFileSync(path.join(out, `run-${type.replace(" ", "-").toLowerCase()}.png`), png);
}
writeFileSync(path.join(out, "run-empty.png"), await renderRunMap({ ...common, type: "Real Eruption", times: ["2010-04-14T06:00:00Z", "2010-04-15T06:00:00Z"], bands: [] }));
for (const h of [6, 12, 24]) {
  const band = samplePlumeBands(h)[0]!;
  const time = `2010-04-14T${String(6 + h).padStart(2, "0").replace("30", "06")}:00:00Z`;
  writeFileSync(path.join(out, `band-exercise-T${h}.png`), await renderBandImage({ ...common, type: "Exercise", time: h === 24 ? "2010-04-15T06:00:00Z" : time, band }));
}
writeFileSync(path.join(out, "band-real-T24.png"), await renderBandImage({ ...common, type: "Real Eruption", time: "2010-04-15T06:00:00Z", band: samplePlumeBands(24)[1]! }));
// Across the antimeridian: Kamchatka / Aleutians.
const kamchatka = { name: "Shiveluch", lat: 56.65, lon: 161.36 };
const east = samplePlumeBands(24).map((b) => ({ label: b.label, areas: b.areas.map((a) => ({ ...a, polygons: a.polygons.map((p) => ({ outer: p.outer.map(([lon, lat]) => shift(lon, lat)), holes: p.holes.map((h) => h.map(([lon, lat]) => shift(lon, lat))) })) })) }));
function shift(lon: number, lat: number): [number, number] {
  // Move the Iceland plume to Shiveluch and turn it east, across 180°.
  const dlon = (lon - EYJAFJALLAJOKULL.lon) * 1.4;
  const dlat = (lat - EYJAFJALLAJOKULL.lat) * 0.5;
  let l = kamchatka.lon + dlon;
  if (l > 180) l -= 360;
  return [Math.round(l * 1e4) / 1e4, Math.round((kamchatka.lat + dlat) * 1e4) / 1e4];
}
writeFileSync(path.join(out, "run-antimeridian.png"), await renderRunMap({ type: "Rehearsal", volcano: kamchatka, reftime: "2024-05-01T00:00:00Z", times: ["2024-05-01T00:00:00Z", "2024-05-02T00:00:00Z"], box: { north: 66, south: 44, east: -160, west: 150 }, thresholds: THRESHOLDS, quantity: QUANTITY, bands: east }));
console.log(`wrote samples to ${out}`);

// Edge cases: other hemispheres, a very large box (110m), four thresholds, a small explicit size.
const calbuco = { name: "Calbuco", lat: -41.33, lon: -72.61 };
const moveTo = (v: { lat: number; lon: number }, bearing: number) => samplePlumeBands(24).map((b, i) => ({ label: b.label, areas: b.areas.map((a) => ({ ...a, polygons: a.polygons.map((p) => ({ outer: p.outer.map(([lon, lat]) => rot(lon, lat, v, bearing)), holes: p.holes.map((h) => h.map(([lon, lat]) => rot(lon, lat, v, bearing))) })) })) }));
function rot(lon: number, lat: number, v: { lat: number; lon: number }, bearing: number): [number, number] {
  const e = (lon - EYJAFJALLAJOKULL.lon) * 111.2 * Math.cos((EYJAFJALLAJOKULL.lat * Math.PI) / 180);
  const n = (lat - EYJAFJALLAJOKULL.lat) * 111.2;
  const b = (bearing * Math.PI) / 180;
  const e2 = e * Math.cos(b) + n * Math.sin(b);
  const n2 = -e * Math.sin(b) + n * Math.cos(b);
  const la = v.lat + n2 / 111.2;
  return [Math.round((v.lon + e2 / (111.2 * Math.cos((la * Math.PI) / 180))) * 1e4) / 1e4, Math.round(la * 1e4) / 1e4];
}
writeFileSync(path.join(out, "edge-south.png"), await renderRunMap({ type: "Real Eruption", volcano: calbuco, reftime: "2015-04-23T00:00:00Z", times: ["2015-04-23T00:00:00Z", "2015-04-24T00:00:00Z"], box: { north: -30, south: -50, east: -50, west: -80 }, thresholds: [0.2, 2, 5, 10], quantity: QUANTITY, bands: moveTo(calbuco, -60) }));
const merapi = { name: "Merapi", lat: -7.54, lon: 110.44 };
writeFileSync(path.join(out, "edge-equator.png"), await renderBandImage({ type: "Exercise", volcano: merapi, reftime: "2023-03-11T00:00:00Z", time: "2023-03-11T12:00:00Z", box: { north: 2, south: -17, east: 125, west: 98 }, thresholds: THRESHOLDS, quantity: QUANTITY, band: moveTo(merapi, 90)[0]!, width: 640, height: 480 }));
writeFileSync(path.join(out, "edge-large.png"), await renderRunMap({ type: "Exercise", volcano: { name: "Hunga Tonga–Hunga Haʻapai", lat: -20.55, lon: -175.39 }, reftime: "2022-01-15T06:00:00Z", times: ["2022-01-15T06:00:00Z", "2022-01-17T06:00:00Z"], box: { north: 20, south: -60, east: -120, west: 120 }, thresholds: THRESHOLDS, quantity: QUANTITY, bands: [] }));
writeFileSync(path.join(out, "edge-arctic.png"), await renderBandImage({ type: "Rehearsal", volcano: { name: "Beerenberg", lat: 71.08, lon: -8.16 }, reftime: "2024-01-01T00:00:00Z", time: "2024-01-01T06:00:00Z", box: { north: 89, south: 60, east: 60, west: -60 }, thresholds: THRESHOLDS, quantity: QUANTITY, band: { label: "FL350/550", areas: [] } }));
