/**
 * GET /point against the model's own numbers: values at grid points read with ncdump (EEMEP regular
 * grid, SNAP rotated pole, a grid across the antimeridian), within the stated coding error and never
 * below; the step valid at `time`; classes at the thresholds; validators; every bad parameter.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ashClasses, classOf } from "../../src/contract/ashClasses.ts";
import { DEFAULT_THRESHOLDS_MG_M3 } from "../../src/model/types.ts";
import { createApp, PRODUCT_PATH } from "../../src/server/app.ts";
import { formatHttpDate, parseHttpDate } from "../../src/server/http.ts";
import type { PointAnswer } from "../../src/contract/queries.ts";
import { HAS_NETCDF_BIN, NO_NETCDF_BIN } from "../model/helpers.ts";
import { DATELINE_GRID, DATELINE_REFTIME, documentValidator, EEMEP_GRID, EEMEP_REFTIME, modelSite, ncdumpValues, SNAP_REFTIME, type ModelSite } from "./pointFixtures.ts";
import { expectProblem, header, http, serve } from "./serverFixtures.ts";

const UA = { "user-agent": "ashcast-test/1 point" };
const BANDS = ["fl000-200", "fl200-350", "fl350-550"] as const;
const variableOf = (band: string) => `MAX6h_ASH_${band}`;
let m: ModelSite;
const values = new Map<string, Float64Array>();

/** The coding promise: never below the model, at most 0.1 % above (0.001 mg/m³ absolute near zero). */
function expectCoded(served: number | null, modelUgM3: number): void {
  const model = modelUgM3 / 1000;
  if (Number.isNaN(model)) return expect(served).toBeNull();
  expect(served).not.toBeNull();
  if (model < 0.001) return expect(served! - model).toBeLessThanOrEqual(0.001);
  expect(served!).toBeGreaterThanOrEqual(model * (1 - 1e-6)); // float32 of µg/1000
  expect(served!).toBeLessThanOrEqual(model * 1.0011);
}

let validate: (body: unknown) => string | undefined;

/** A 200 answer, checked against the OpenAPI document's schema. */
async function point(query: string): Promise<PointAnswer> {
  const res = await http(m.server, `/point?${query}`, { headers: UA });
  expect(res.status, res.text()).toBe(200);
  expect(validate(res.json())).toBeUndefined();
  return res.json() as PointAnswer;
}

beforeAll(async () => {
  m = await modelSite();
  validate = await documentValidator(m.server, "PointAnswer");
  if (!HAS_NETCDF_BIN) return;
  for (const band of BANDS) {
    values.set(`eemep/${band}`, ncdumpValues(m.eemep.file, variableOf(band)));
    values.set(`snap/${band}`, ncdumpValues(m.snap.file, variableOf(band)));
    values.set(`dateline/${band}`, ncdumpValues(m.dateline.file, variableOf(band)));
  }
  values.set("snap/longitude", ncdumpValues(m.snap.file, "longitude"));
  values.set("snap/latitude", ncdumpValues(m.snap.file, "latitude"));
}, 120_000);

afterAll(async () => {
  await m?.server.close();
  await m?.site.cleanup();
});

/** Cells where the plume is (the band's maximum over the run) and a few without ash. */
function interestingCells(field: Float64Array, nx: number, ny: number, steps: number): Array<{ x: number; y: number }> {
  const cells = nx * ny;
  let best = 0;
  for (let k = 0; k < field.length; k++) if (field[k]! > field[best]!) best = k;
  const top = best % cells;
  const around = [-3, 0, 2].flatMap((dy) => [-2, 0, 3].map((dx) => ({ x: (top % nx) + dx, y: Math.floor(top / nx) + dy })));
  return [...around, { x: 0, y: 0 }, { x: nx - 1, y: ny - 1 }, { x: 5, y: ny - 2 }].filter((c) => c.x >= 0 && c.x < nx && c.y >= 0 && c.y < ny && steps > 0);
}

describe.skipIf(!HAS_NETCDF_BIN)(`values at grid points are the NetCDF values${HAS_NETCDF_BIN ? "" : `: skipped, ${NO_NETCDF_BIN}`}`, () => {
  it("EEMEP (regular lat/lon): every band and step at cell centres", async () => {
    const { nx, ny, steps, lat0, lon0, res } = EEMEP_GRID;
    for (const cell of interestingCells(values.get("eemep/fl200-350")!, nx, ny, steps)) {
      const answer = await point(`lat=${lat0 + cell.y * res}&lon=${lon0 + cell.x * res}&reftime=${EEMEP_REFTIME}`);
      expect(answer.series.map((s) => s.band)).toEqual(["FL000-200", "FL200-350", "FL350-550"]);
      answer.series.forEach((series, b) => {
        expect(series.cell).toEqual(cell);
        expect(series.steps).toHaveLength(steps);
        const field = values.get(`eemep/${BANDS[b]}`)!;
        series.steps.forEach((step, t) => expectCoded(step.value, field[t * nx * ny + cell.y * nx + cell.x]!));
      });
    }
  });

  it("between centres, a place gets the highest of the 2 or 4 centres around it, step by step: never less than the areas drawn there", async () => {
    const { nx, ny, steps, lat0, lon0, res } = EEMEP_GRID;
    const field = values.get("eemep/fl200-350")!;
    const [top] = interestingCells(field, nx, ny, steps).slice(4, 5); // the plume's peak cell
    const { x, y } = top!;
    const inside = await point(`lat=${lat0 + y * res + 0.2}&lon=${lon0 + x * res - 0.2}&reftime=${EEMEP_REFTIME}`);
    expect(inside.series[1]!.cell).toEqual({ x, y });
    expect(inside.series[1]!.support).toEqual([{ x: x - 1, y }, { x, y }, { x: x - 1, y: y + 1 }, { x, y: y + 1 }]);
    inside.series[1]!.steps.forEach((step, t) => {
      const around = [[x - 1, y], [x, y], [x - 1, y + 1], [x, y + 1]].map(([cx, cy]) => field[t * nx * ny + cy! * nx + cx!]!);
      expectCoded(step.value, Math.max(...around));
    });
    const edge = await point(`lat=${lat0 + y * res}&lon=${lon0 + x * res + 0.3}&reftime=${EEMEP_REFTIME}`);
    expect(edge.series[1]!.cell).toEqual({ x: x + 1, y });
    expect(edge.series[1]!.support).toEqual([{ x, y }, { x: x + 1, y }]);
  });

  it("SNAP (rotated pole): the geographic centre of each rotated cell, from the file's own 2-D arrays", async () => {
    const { nx, ny, steps } = EEMEP_GRID; // the SNAP generator uses the same sizes
    const lon = values.get("snap/longitude")!;
    const lat = values.get("snap/latitude")!;
    for (const cell of interestingCells(values.get("snap/fl000-200")!, nx, ny, steps)) {
      const k = cell.y * nx + cell.x;
      const answer = await point(`lat=${lat[k]}&lon=${lon[k]}&reftime=${SNAP_REFTIME}`);
      answer.series.forEach((series, b) => {
        expect(series.model).toBe("SNAP");
        expect(series.cell).toEqual(cell);
        const field = values.get(`snap/${BANDS[b]}`)!;
        series.steps.forEach((step, t) => expectCoded(step.value, field[t * nx * ny + k]!));
      });
    }
  });

  it("across the antimeridian: 179.5°E and 179.5°W (180.5) are neighbouring columns of one grid", async () => {
    const { nx, ny, lat0, res } = DATELINE_GRID;
    const field = values.get("dateline/fl000-200")!;
    for (const [lon, x] of [[179.5, 39], [-179.5, 41], [180, 40], [-170.5, 59]] as const) {
      const answer = await point(`lat=${lat0 + 14 * res}&lon=${lon}&reftime=${DATELINE_REFTIME}`);
      expect(answer.series[0]!.cell).toEqual({ x, y: 14 });
      answer.series[0]!.steps.forEach((step, t) => expectCoded(step.value, field[t * nx * ny + 14 * nx + x]!));
    }
  });
});

describe("time, classes and the answer's form", () => {
  it("time selects the step valid then (a step lasts until the next one); the answer keeps the issue's fields", async () => {
    const all = await point(`lat=63.98&lon=-19.7&reftime=${EEMEP_REFTIME}`);
    const times = all.series[0]!.steps.map((s) => s.time);
    const mid = new Date(Date.parse(times[5]!) + 59 * 60_000).toISOString().replace(".000Z", "Z");
    const one = await point(`lat=63.98&lon=-19.7&reftime=${EEMEP_REFTIME}&time=${mid}`);
    expect(one).toMatchObject({ reftime: EEMEP_REFTIME, location: { lat: 63.98, lon: -19.7 }, units: "mg/m3", time: mid });
    expect(one.series).toHaveLength(3);
    one.series.forEach((series, b) => expect(series.steps).toEqual([all.series[b]!.steps[5]]));
    const exact = await point(`lat=63.98&lon=-19.7&reftime=${EEMEP_REFTIME}&time=${times[6]}`);
    expect(exact.series[0]!.steps[0]!.time).toBe(times[6]);
  });

  it("the place as the client spelled it, when that is a JSON number, and the number's own form otherwise: the same answer, always valid JSON", async () => {
    const canonical = await point(`lat=63.98&lon=-19.7&reftime=${EEMEP_REFTIME}`);
    for (const [lat, lon] of [["63.980", "-19.70"], ["063.98", "-019.7"], ["%2B63.98", "-19.7"], ["63.98", "-19.700000000000000000000001"]]) {
      const query = `lat=${lat}&lon=${lon}&reftime=${EEMEP_REFTIME}`;
      const res = await http(m.server, `/point?${query}`, { headers: UA });
      const answer = JSON.parse(res.text()) as PointAnswer; // throws on `063.98` or `+63.98` in the body
      expect(answer.location, query).toEqual({ lat: 63.98, lon: -19.7 });
      expect(answer.series, query).toEqual(canonical.series);
    }
    const spelled = await http(m.server, `/point?lat=63.980&lon=-19.70&reftime=${EEMEP_REFTIME}`, { headers: UA });
    expect(spelled.text()).toContain('"location":{"lat":63.980,"lon":-19.70}');
    expect(spelled.headers.etag).toMatch(/:63\.980:-19\.70"$/);
    const respelled = await http(m.server, `/point?lat=063.98&lon=-19.7&reftime=${EEMEP_REFTIME}`, { headers: UA });
    expect(respelled.text()).toContain('"location":{"lat":63.98,"lon":-19.7}');
  });

  it("the class is the one the value falls in: none below the lowest threshold, and every class of the table", async () => {
    const classes = ashClasses(DEFAULT_THRESHOLDS_MG_M3);
    const seen = new Set<string>();
    for (const query of [`lat=63.98&lon=-19.7`, `lat=64.5&lon=-15`, `lat=62&lon=-10`, `lat=41&lon=-44`]) {
      const answer = await point(`${query}&reftime=${EEMEP_REFTIME}`);
      for (const step of answer.series.flatMap((s) => s.steps)) {
        expect(step.class).toBe(classOf(step.value!, classes)?.id ?? "none");
        seen.add(step.class);
      }
    }
    expect([...seen].sort()).toEqual(["high", "low", "medium", "none"]);
  });

  it("latest run by default, with the data routes' caching and cache tags (purged with the run); If-None-Match and If-Modified-Since give 304", async () => {
    const first = await http(m.server, "/point?lat=52&lon=179.5", { headers: UA });
    expect(first.status).toBe(200);
    expect((first.json() as PointAnswer).reftime).toBe(DATELINE_REFTIME);
    expect(header(first, "cache-control")).toBe("public, max-age=60, s-maxage=600");
    expect(header(first, "xkey")).toBe(`latest run:${DATELINE_REFTIME}`);
    expect(header(first, "surrogate-key")).toBe(`latest run:${DATELINE_REFTIME}`);
    expect(header(first, "content-type")).toBe("application/json;charset=UTF-8");
    expect(header(first, "access-control-allow-origin")).toBe("*");
    const etag = header(first, "etag");
    expect(etag).toMatch(/^"[0-9a-f]{20}:52:179\.5"$/);
    const again = await http(m.server, "/point?lat=52&lon=179.5", { headers: { ...UA, "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(header(again, "etag")).toBe(etag);
    expect(again.body.length).toBe(0);
    const since = await http(m.server, "/point?lat=52&lon=179.5", { headers: { ...UA, "if-modified-since": header(first, "last-modified") } });
    expect(since.status).toBe(304);
    const other = await http(m.server, "/point?lat=52.5&lon=179.5", { headers: UA });
    expect(header(other, "etag")).not.toBe(etag);
    const pinned = await http(m.server, `/point?lat=52&lon=179.5&reftime=${DATELINE_REFTIME}`, { headers: UA });
    expect(header(pinned, "cache-control")).toBe("public, max-age=300, s-maxage=3000");
    expect(header(pinned, "xkey")).toBe(`run:${DATELINE_REFTIME}`);
    const head = await http(m.server, "/point?lat=52&lon=179.5", { method: "HEAD", headers: UA });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    // If-Match and If-Unmodified-Since (left to the app by the fast path): 200 when they hold, a 412 problem otherwise.
    const earlier = formatHttpDate(parseHttpDate(header(first, "last-modified"))! - 1000);
    for (const [headers, status] of [
      [{ "if-match": etag }, 200],
      [{ "if-match": "*" }, 200],
      [{ "if-unmodified-since": header(first, "last-modified") }, 200],
      [{ "if-match": '"other"' }, 412],
      [{ "if-match": `W/${etag}` }, 412],
      [{ "if-unmodified-since": earlier }, 412],
      [{ "if-match": '"other"', "if-none-match": etag }, 412],
    ] as Array<[Record<string, string>, number]>) {
      const res = await http(m.server, "/point?lat=52&lon=179.5", { headers: { ...UA, ...headers } });
      expect(res.status, JSON.stringify(headers)).toBe(status);
      if (status === 412) expect(header(res, "cache-control")).toBe("no-store");
      else expect(res.body.equals(first.body)).toBe(true);
    }
  });
});

describe("bad parameters are refused, naming the parameter", () => {
  const cases: Array<[string, number, RegExp]> = [
    ["lon=-19.7", 400, /lat parameter is missing/],
    ["lat=63.98", 400, /lon parameter is missing/],
    ["lat=abc&lon=1", 400, /lat "abc" is not a decimal number/],
    ["lat=1e1&lon=1", 400, /lat "1e1" is not a decimal number/],
    ["lat=NaN&lon=1", 400, /lat "NaN"/],
    ["lat=63&lon=", 400, /lon "" is not a decimal number/],
    ["lat=90.5&lon=1", 400, /lat 90.5 is outside -90..90/],
    ["lat=60&lon=-180.01", 400, /lon -180.01 is outside -180..180/],
    ["lat=60&lat=61&lon=1", 400, /give the lat parameter once/],
    ["lat=60&lon=1&time=tomorrow", 400, /time "tomorrow" is not a date-time/],
    ["lat=60&lon=1&time=2019-03-22T12:00:00", 400, /time "2019-03-22T12:00:00" is not a date-time/],
    ["lat=60&lon=1&reftime=yesterday", 400, /reftime "yesterday"/],
    ["lat=60&lon=1&reftime=2001-01-01T00:00:00Z", 404, /no run is published for reftime 2001-01-01T00:00:00Z/],
    [`lat=-60&lon=1&reftime=${EEMEP_REFTIME}`, 422, /outside the domain of every model of run 2019-03-22T12:00:00Z/],
    [`lat=63.98&lon=-19.7&reftime=${EEMEP_REFTIME}&time=2019-03-22T12:00:00Z`, 422, /time 2019-03-22T12:00:00Z is outside the forecast of run 2019-03-22T12:00:00Z/],
    [`lat=63.98&lon=-19.7&reftime=${EEMEP_REFTIME}&time=2019-04-22T12:00:00Z`, 422, /outside the forecast/],
  ];
  it.each(cases)("?%s → %i", async (query, status, detail) => {
    const res = await http(m.server, `/point?${query}`, { headers: UA });
    expect(expectProblem(res, status).detail).toMatch(detail);
  });

  it("a place or time without an answer is a 422 whatever validators the client sends, never a 304", async () => {
    const lastModified = header(await http(m.server, `/point?lat=63.98&lon=-19.7&reftime=${EEMEP_REFTIME}`, { headers: UA }), "last-modified");
    for (const [query, detail] of [
      [`lat=-60&lon=1&reftime=${EEMEP_REFTIME}`, /outside the domain/],
      [`lat=63.98&lon=-19.7&reftime=${EEMEP_REFTIME}&time=2019-04-22T12:00:00Z`, /outside the forecast/],
    ] as const) {
      for (const validators of [{ "if-none-match": "*" }, { "if-modified-since": lastModified }] as Array<Record<string, string>>) {
        const res = await http(m.server, `/point?${query}`, { headers: { ...UA, ...validators } });
        expect(expectProblem(res, 422).detail, `${query} ${JSON.stringify(validators)}`).toMatch(detail);
      }
    }
  });

  it("other methods than GET, HEAD and OPTIONS need an operator first (as every mutating request)", async () => {
    const res = await http(m.server, "/point?lat=60&lon=1", { method: "DELETE", headers: UA });
    expect([401, 405]).toContain(res.status);
  });
});

describe("GeoJSON ash areas beside every KML ash area resource", () => {
  it("listed by /resources, served as application/geo+json with validators, with the KML's polygons", async () => {
    const names = (await http(m.server, `/resources?reftime=${EEMEP_REFTIME}`, { headers: UA })).json() as string[];
    const kml = names.filter((name) => name.endsWith(".kml"));
    const geojson = names.filter((name) => name.endsWith(".geojson"));
    expect(kml.length).toBe(3 * (1 + EEMEP_GRID.steps)); // 3 bands, the whole run and each step
    expect(geojson.sort()).toEqual(kml.map((name) => name.replace(/\.kml$/, ".geojson")).sort());
    // A step with ash in every band: the polygons' positions are the KML's, ring by ring, written alike.
    const stepName = geojson.find((name) => name.includes("fl200-350/") && name.includes("T20:00:00Z"))!;
    const res = await http(m.server, `/resources?name=${encodeURIComponent(stepName)}`, { headers: UA });
    expect(res.status).toBe(200);
    expect(header(res, "content-type")).toBe("application/geo+json");
    expect(header(res, "etag")).toMatch(/^"/);
    const doc = res.json() as { type: string; features: Array<{ geometry: { type: string; coordinates: number[][][][] }; properties: Record<string, unknown> }> };
    expect(doc.type).toBe("FeatureCollection");
    const rings = doc.features.filter((f) => f.geometry.type === "MultiPolygon").flatMap((f) => f.geometry.coordinates.flat(1).map((r) => r.map(([x, y]) => `${x},${y}`).join(" ")));
    expect(rings.length).toBeGreaterThan(0);
    const kmlText = (await http(m.server, `/resources?name=${encodeURIComponent(stepName.replace(/\.geojson$/, ".kml"))}`, { headers: UA })).text();
    const kmlRings = [...kmlText.matchAll(/<coordinates>([^<]+)<\/coordinates>/g)].map((match) => match[1]!).filter((text) => text.includes(" "));
    expect(rings).toEqual(kmlRings);
    for (const feature of doc.features.filter((f) => f.properties.kind === "ash")) {
      expect(feature.properties).toMatchObject({ band: "FL200/350", units: "mg/m3", time: expect.stringMatching(/T20:00:00Z$/) });
    }
    const again = await http(m.server, `/resources?name=${encodeURIComponent(stepName)}`, { headers: { ...UA, "if-none-match": header(res, "etag") } });
    expect(again.status).toBe(304);
  });
});

describe("the node fast path answers /point as the app does", () => {
  it("for answers, refusals, validators and HEAD, once the grids are in memory", async () => {
    const app = createApp({ source: m.server.source, termsOfService: Buffer.from("terms"), openapi: Buffer.from("{}") });
    const targets = [
      `/point?lat=63.98&lon=-19.7&reftime=${EEMEP_REFTIME}`,
      `/point?lat=63.98&lon=-19.7&reftime=${EEMEP_REFTIME}&time=2019-03-22T20:30:00Z`,
      "/point?lat=52&lon=179.5",
      "/point?lat=95&lon=1",
      // Plain queries are read without URLSearchParams: names that start alike, order, repeats, and queries
      // that need decoding (read by URLSearchParams) must come out as the app reads them.
      `/point?latitude=1&lon=-19.7&lat=63.980&reftime=${EEMEP_REFTIME}`,
      `/point?lat=%2B63.98&lon=-19.7&reftime=${EEMEP_REFTIME}`,
      `/point?lat=+63.98&lon=-19.7&reftime=${EEMEP_REFTIME}`,
      "/point?lat=60&lat=61&lon=1",
      "/point?lat=60&lon=1&time=",
      `/point?lat=-60&lon=1&reftime=${EEMEP_REFTIME}`,
    ];
    for (const target of targets) await http(m.server, target, { headers: UA }); // loads the grids
    const PER_CONNECTION = new Set(["date", "connection", "keep-alive", "expires", "content-length"]);
    const comparable = (status: number, headers: Record<string, unknown>, body: Buffer) => ({
      status,
      headers: Object.fromEntries(Object.entries(headers).filter(([name]) => !PER_CONNECTION.has(name))),
      body: body.toString("utf8"),
    });
    let answered = 0;
    for (const target of targets) {
      const first = await http(m.server, target, { headers: UA });
      const etag = first.headers.etag as string | undefined;
      for (const headers of [{}, ...(etag ? [{ "if-none-match": etag }, { "if-modified-since": first.headers["last-modified"] as string }] : [])] as Array<Record<string, string>>) {
        for (const method of ["GET", "HEAD"]) {
          const before = m.server.fastPath.answered;
          const overSocket = await http(m.server, target, { method, headers: { ...UA, ...headers } });
          expect(m.server.fastPath.answered, `${method} ${target}`).toBe(before + 1);
          const response = await app.request(`http://127.0.0.1${PRODUCT_PATH}${target}`, { method, headers: { ...UA, ...headers } });
          const appHeaders: Record<string, string> = {};
          response.headers.forEach((value, name) => (appHeaders[name] = value));
          expect(comparable(overSocket.status, overSocket.headers, overSocket.body), `${method} ${target} ${JSON.stringify(headers)}`).toEqual(
            comparable(response.status, appHeaders, Buffer.from(await response.arrayBuffer())),
          );
          answered++;
        }
      }
    }
    expect(answered).toBeGreaterThanOrEqual(20);
  });

  it("gives each of many pipelined queries its own answer, to a client that reads nothing for a while (answers the socket could not take at once keep their bytes)", async () => {
    const places = Array.from({ length: 600 }, (_, i) => ({ lat: 40.3 + (i % 60) * 0.55, lon: -44.7 + Math.floor(i / 60) * 7.1 + (i % 7) * 0.13 }));
    const target = (p: { lat: number; lon: number }) => `${new URL(m.server.url).pathname}/point?lat=${p.lat.toFixed(2)}&lon=${p.lon.toFixed(2)}&reftime=${EEMEP_REFTIME}`;
    await http(m.server, `/point?lat=60&lon=-20&reftime=${EEMEP_REFTIME}`, { headers: UA }); // the grids in memory: the fast path answers
    const before = m.server.fastPath.answered;
    const url = new URL(m.server.url);
    const received = await pipelined(url, places.map(target), 500); // the answers pile up in the server's socket and its queue
    expect(m.server.fastPath.answered - before).toBe(places.length);
    const bodies = splitResponses(received); // then each place is asked again alone
    expect(bodies).toHaveLength(places.length);
    for (let i = 0; i < places.length; i += 1) {
      const alone = await http(m.server, target(places[i]!).slice(url.pathname.length), { headers: UA });
      expect(bodies[i], target(places[i]!)).toBe(alone.text());
    }
  });

  it("gives each of a client's answers its own bytes when the client stops reading while requests come one at a time and others are answered meanwhile", async () => {
    const url = new URL(m.server.url);
    const places = Array.from({ length: 2000 }, (_, i) => ({ lat: 40.3 + (i % 60) * 0.55, lon: -44.7 + (Math.floor(i / 60) % 10) * 7.1 + (i % 7) * 0.13 }));
    const path = (p: { lat: number; lon: number }) => `/point?lat=${p.lat.toFixed(2)}&lon=${p.lon.toFixed(2)}&reftime=${EEMEP_REFTIME}`;
    await http(m.server, path(places[0]!), { headers: UA });
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    const done = new Promise<Buffer>((resolve, reject) => {
      socket.on("error", reject);
      socket.on("data", (chunk: Buffer) => chunks.push(chunk));
      socket.on("end", () => resolve(Buffer.concat(chunks)));
    });
    socket.pause();
    await new Promise((resolve) => socket.once("connect", resolve));
    for (let i = 0; i < places.length; i++) {
      socket.write(`GET ${url.pathname}${path(places[i]!)} HTTP/1.1\r\nHost: ${url.host}\r\nUser-Agent: ashcast-test/1 point\r\n${i === places.length - 1 ? "Connection: close\r\n" : ""}\r\n`);
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (i % 40 === 39) await http(m.server, path({ lat: 70 - i / 100, lon: 20 - i / 50 }), { headers: UA }); // another client, another answer
    }
    socket.resume();
    const bodies = splitResponses(await done);
    expect(bodies).toHaveLength(places.length);
    for (let i = 0; i < places.length; i++) expect(bodies[i], path(places[i]!)).toBe((await http(m.server, path(places[i]!), { headers: UA })).text());
  }, 120_000);

  it("answers queries left to the app (a query too long for the fast path), pipelined, each with its own bytes", async () => {
    const url = new URL(m.server.url);
    const places = Array.from({ length: 8 }, (_, i) => ({ lat: 55 + i * 0.7, lon: -30 + i * 1.3 }));
    const path = (p: { lat: number; lon: number }) => `/point?lat=${p.lat.toFixed(2)}&lon=${p.lon.toFixed(2)}&reftime=${EEMEP_REFTIME}`;
    const padding = `&unused=${"x".repeat(320)}`;
    await http(m.server, path(places[0]!), { headers: UA });
    const before = m.server.fastPath.answered;
    const received = await pipelined(url, places.map((p) => `${url.pathname}${path(p)}${padding}`), 0);
    expect(m.server.fastPath.answered).toBe(before);
    const bodies = splitResponses(received);
    for (let i = 0; i < places.length; i++) expect(bodies[i], path(places[i]!)).toBe((await http(m.server, path(places[i]!), { headers: UA })).text());
  });

  it("answers the first queries of a server whose grids are still loading each with its own bytes", async () => {
    const fresh = await serve(m.site);
    try {
      const places = Array.from({ length: 8 }, (_, i) => ({ lat: 55 + i * 0.7, lon: -30 + i * 1.3 }));
      const path = (p: { lat: number; lon: number }) => `/point?lat=${p.lat.toFixed(2)}&lon=${p.lon.toFixed(2)}&reftime=${EEMEP_REFTIME}`;
      const first = await Promise.all(places.map((p) => http(fresh, path(p), { headers: UA })));
      for (let i = 0; i < places.length; i++) expect(first[i]!.text(), path(places[i]!)).toBe((await http(fresh, path(places[i]!), { headers: UA })).text());
    } finally {
      await fresh.close();
    }
  });

  it("over TLS, where every answer waits for its encryption, each answer keeps its bytes (the buffers are written into again once sent)", async () => {
    const cert = join(m.site.root, "cert.pem");
    const key = join(m.site.root, "key.pem");
    execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"], { stdio: "ignore" });
    const tls = await serve(m.site, { tls: { certFile: cert, keyFile: key } });
    try {
      const url = new URL(tls.url);
      const agent = new HttpsAgent({ keepAlive: true, maxSockets: 4, ca: readFileSync(cert) });
      const get = (target: string) =>
        new Promise<string>((resolve, reject) => {
          const req = httpsRequest({ host: url.hostname, port: url.port, path: `${url.pathname}${target}`, headers: UA, agent }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
            res.on("error", reject);
          });
          req.on("error", reject);
          req.end();
        });
      const places = Array.from({ length: 200 }, (_, i) => `/point?lat=${(41 + (i % 50) * 0.6).toFixed(2)}&lon=${(-40 + Math.floor(i / 50) * 15 + (i % 9) * 0.4).toFixed(2)}&reftime=${EEMEP_REFTIME}`);
      await get(places[0]!); // the grids in memory
      const before = tls.fastPath.answered;
      const overTls = await Promise.all(places.map(get)); // four connections at once
      expect(tls.fastPath.answered - before).toBe(places.length);
      agent.destroy();
      for (let i = 0; i < places.length; i++) expect(overTls[i], places[i]).toBe((await http(m.server, places[i]!, { headers: UA })).text());
    } finally {
      await tls.close();
    }
  });
});

/** GET requests sent at once on one socket (the last closes it), read after `pauseMs`: every byte the server sent back. */
function pipelined(url: URL, targets: readonly string[], pauseMs: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.on("error", reject);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => resolve(Buffer.concat(chunks)));
    if (pauseMs > 0) {
      socket.pause();
      setTimeout(() => socket.resume(), pauseMs);
    }
    socket.write(targets.map((target, i) => `GET ${target} HTTP/1.1\r\nHost: ${url.host}\r\nUser-Agent: ashcast-test/1 point\r\n${i === targets.length - 1 ? "Connection: close\r\n" : ""}\r\n`).join(""));
  });
}

/** The bodies of HTTP/1.1 responses read back to back from one socket (each with a Content-Length). */
function splitResponses(received: Buffer): string[] {
  const bodies: string[] = [];
  for (let at = 0; at < received.length; ) {
    const headEnd = received.indexOf("\r\n\r\n", at);
    const head = received.subarray(at, headEnd).toString("latin1");
    expect(head.startsWith("HTTP/1.1 200"), head).toBe(true);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)![1]);
    bodies.push(received.subarray(headEnd + 4, headEnd + 4 + length).toString("utf8"));
    at = headEnd + 4 + length;
  }
  return bodies;
}

