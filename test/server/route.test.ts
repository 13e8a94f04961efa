/**
 * POST /route on a generated EEMEP run: a flight through the plume at a known step and flight level finds
 * it where the model field (read with ncdump) has it, the same flight a few cells beside it finds none;
 * every bad body is refused naming what is wrong.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouteAnswer } from "../../src/contract/queries.ts";
import { MAX_ROUTE_VERTICES } from "../../src/server/routeInput.ts";
import { HAS_NETCDF_BIN, NO_NETCDF_BIN } from "../model/helpers.ts";
import { documentValidator, EEMEP_GRID, EEMEP_REFTIME, modelSite, ncdumpValues, type ModelSite } from "./pointFixtures.ts";
import { expectProblem, header, http } from "./serverFixtures.ts";

const UA = { "user-agent": "ashcast-test/1 route", "content-type": "application/geo+json" };
let m: ModelSite;
let validate: (body: unknown) => string | undefined;

beforeAll(async () => {
  m = await modelSite();
  validate = await documentValidator(m.server, "RouteAnswer");
}, 120_000);
afterAll(async () => {
  await m?.server.close();
  await m?.site.cleanup();
});

const post = (body: unknown, query = `?reftime=${EEMEP_REFTIME}`, headers: Record<string, string> = UA) =>
  http(m.server, `/route${query}`, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
const feature = (coordinates: unknown, coordTimes?: unknown) => ({ type: "Feature", geometry: { type: "LineString", coordinates }, properties: coordTimes === undefined ? {} : { coordTimes } });

describe.skipIf(!HAS_NETCDF_BIN)(`through the generated plume${HAS_NETCDF_BIN ? "" : `: skipped, ${NO_NETCDF_BIN}`}`, () => {
  const { nx, ny, lat0, lon0, res } = EEMEP_GRID;
  const k = 12; // the step flown through
  let field: Float64Array;
  let column = 0;
  let row = 0;
  let times: string[];

  beforeAll(() => {
    field = ncdumpValues(m.eemep.file, "MAX6h_ASH_fl200-350");
    times = m.eemep.times;
    // The column where the plume is deepest north-south (most rows at or above 200 µg/m³), and its peak row.
    let deepest = 0;
    for (let x = 0; x < nx; x++) {
      let rows = 0;
      let peak = 0;
      for (let y = 0; y < ny; y++) {
        const v = field[k * nx * ny + y * nx + x]!;
        if (v >= 200) rows++;
        if (v > field[k * nx * ny + peak * nx + x]!) peak = y;
      }
      if (rows > deepest) [deepest, column, row] = [rows, x, peak];
    }
    expect(deepest).toBeGreaterThanOrEqual(3); // the plume is there, several cells deep, at this step and band
  });

  /** North along the meridian of a column, 3° either side of the plume's row, at FL300, within step k. */
  const flight = (x: number) => {
    const lon = lon0 + x * res;
    const start = Date.parse(times[k]!) + 5 * 60_000;
    return feature([[lon, lat0 + row * res - 3, 9144], [lon, lat0 + row * res + 3, 9144]], [new Date(start).toISOString(), new Date(start + 40 * 60_000).toISOString()]);
  };
  const at = (x: number, y: number) => field[k * nx * ny + y * nx + x]! / 1000;

  it("meets it in the rows where the field reaches 0.2 mg/m³, with the field's highest value there", async () => {
    const response = await post(flight(column));
    expect(response.status, response.text()).toBe(200);
    expect(validate(response.json())).toBeUndefined();
    const answer = response.json() as RouteAnswer;
    const [model] = answer.models;
    expect(model!.encounters!.length).toBeGreaterThanOrEqual(1);
    const encounter = model!.encounters!.find((e) => e.entry.lat <= lat0 + row * res && e.exit.lat >= lat0 + row * res)!;
    expect(encounter).toBeDefined();
    // The rows of the field at or above 0.2 around the plume's row, within the flight's reach (6 rows either side).
    let first = row;
    while (first > row - 6 && at(column, first - 1) >= 0.2) first--;
    let last = row;
    while (last < row + 6 && at(column, last + 1) >= 0.2) last++;
    // A place gets the highest of the centres around it: the stretch begins just past the centre of the row
    // before the first with ash (where the ash areas drawn begin) and ends just before the centre of the row after the last.
    const latOf = (y: number) => lat0 + y * res;
    const spacing = model!.sampling_km / 111.2;
    expect(encounter.entry.lat).toBeGreaterThan(latOf(first - 1));
    expect(encounter.entry.lat).toBeLessThanOrEqual(latOf(first - 1) + spacing + 1e-5);
    expect(encounter.exit.lat).toBeLessThan(latOf(last + 1));
    expect(encounter.exit.lat).toBeGreaterThanOrEqual(latOf(last + 1) - spacing - 1e-5); // positions are answered to 5 decimals
    const highest = Math.max(...Array.from({ length: last - first + 1 }, (_, i) => at(column, first + i)));
    expect(encounter.highest).toBeGreaterThanOrEqual(highest * (1 - 1e-6));
    expect(encounter.highest).toBeLessThanOrEqual(highest * 1.0011);
    expect(encounter.band).toBe("FL200-350");
    expect(Date.parse(encounter.entry.time!)).toBeGreaterThanOrEqual(Date.parse(times[k]!));
    expect(Date.parse(encounter.exit.time!)).toBeLessThan(Date.parse(times[k + 1]!));
    expect(header(response, "cache-control")).toBe("no-store");
  });

  it("without coordTimes, per step the highest value along the path: the plume's step is not clear", async () => {
    const untimed = flight(column) as { properties: Record<string, unknown> };
    untimed.properties = {};
    const response = await post(untimed);
    expect(validate(response.json())).toBeUndefined();
    const [model] = (response.json() as RouteAnswer).models;
    expect(model!.encounters).toBeUndefined();
    expect(model!.steps).toHaveLength(times.length);
    expect(model!.steps![k]!.value).toBeGreaterThanOrEqual(at(column, row) * (1 - 1e-6));
    expect(model!.steps![k]!.band).toBe("FL200-350");
  });

  it("the same flight beside it, where the field is below 0.2 all along, meets nothing", async () => {
    let beside = -1;
    for (let x = 0; x < nx && beside === -1; x++) {
      let clear = true;
      for (let y = Math.max(0, row - 7); y <= Math.min(ny - 1, row + 7); y++) if (!(at(x, y) < 0.2)) clear = false;
      if (clear && Math.abs(x - column) < 40) beside = x;
    }
    expect(beside).toBeGreaterThanOrEqual(0);
    const answer = (await post(flight(beside))).json() as RouteAnswer;
    expect(validate(answer)).toBeUndefined();
    expect(answer.models[0]!.encounters).toEqual([]);
  });
});

describe("bad bodies are refused, naming what is wrong", () => {
  const line = [[-20, 60, 9000], [-10, 62, 9000]];
  const cases: Array<[string, unknown, number, RegExp]> = [
    ["not JSON", "{not json", 400, /not JSON/],
    ["an array", [1, 2], 422, /GeoJSON Feature object/],
    ["another type", { type: "FeatureCollection", features: [] }, 422, /type is "FeatureCollection", expected "Feature"/],
    ["no geometry", { type: "Feature", properties: {} }, 422, /geometry is missing/],
    ["a Point", { type: "Feature", geometry: { type: "Point", coordinates: [0, 0] } }, 422, /geometry.type is "Point"/],
    ["one position", feature([[-20, 60, 9000]]), 422, /at least 2 positions/],
    ["a string position", feature([[-20, 60, 9000], "x"]), 422, /geometry.coordinates\[1\] must be \[lon, lat, altitude_m\]/],
    ["no altitude", feature([[-20, 60], [-10, 62]]), 422, /geometry.coordinates\[0\] has no altitude/],
    ["longitude 200", feature([[200, 60, 9000], [-10, 62, 9000]]), 422, /coordinates\[0\]: longitude 200/],
    ["latitude -91", feature([[-20, 60, 9000], [-10, -91, 9000]]), 422, /coordinates\[1\]: latitude -91/],
    ["feet as metres", feature([[-20, 60, 35000], [-10, 62, 35000]]), 422, /altitude 35000 m is outside/],
    ["antipodal positions", feature([[-20, 60, 9000], [0, 60, 9000], [180, -60, 9000]]), 422, /coordinates\[1\] and \[2\] are antipodal/],
    ["coordTimes too short", feature(line, ["2019-03-22T13:00:00Z"]), 422, /coordTimes must be an array of 2 instants/],
    ["coordTimes not times", feature(line, ["2019-03-22T13:00:00Z", "later"]), 422, /coordTimes\[1\] is not a date-time/],
    ["coordTimes without a zone", feature(line, ["2019-03-22T13:00:00Z", "2019-03-22T14:00:00"]), 422, /coordTimes\[1\]/],
    ["coordTimes going back", feature(line, ["2019-03-22T14:00:00Z", "2019-03-22T13:00:00Z"]), 422, /coordTimes\[1\] .* is before/],
    ["coordTimes going back by less than a second", feature(line, ["2019-03-22T13:00:00.9Z", "2019-03-22T13:00:00.1Z"]), 422, /coordTimes\[1\] \(2019-03-22T13:00:00.1Z\) is before/],
    ["too many vertices", feature(Array.from({ length: MAX_ROUTE_VERTICES + 1 }, (_, i) => [-20 + i * 1e-4, 60, 9000])), 413, /at most 10000/],
  ];
  it.each(cases.map(([name, ...rest]) => [`${name} → ${rest[1]}`, ...rest] as const))("%s", async (_, body, status, detail) => {
    expect(expectProblem(await post(body), status).detail).toMatch(detail);
  });

  it("a Feature with an id, a bbox and members of its own is answered, and the published RouteRequest schema accepts it", async () => {
    const validateRequest = await documentValidator(m.server, "RouteRequest");
    const body = { ...feature(line, ["2019-03-22T13:00:00Z", "2019-03-22T14:00:00Z"]), id: "KEF-OSL", bbox: [-20, 60, -10, 62], properties: { name: "FI318", coordTimes: ["2019-03-22T13:00:00Z", "2019-03-22T14:00:00Z"] }, flight: { callsign: "ICE318" } };
    expect(validateRequest(body)).toBeUndefined();
    expect((await post(body)).status).toBe(200);
  });

  it("a file saved with a UTF-8 byte order mark is read as the JSON after it", async () => {
    expect((await post(`\uFEFF${JSON.stringify(feature(line))}`)).status).toBe(200);
  });

  it("a body over 1 MiB → 413 without reading it all", async () => {
    const big = JSON.stringify(feature(line)).replace('"properties":{}', `"properties":{"pad":"${"x".repeat(1024 * 1024)}"}`);
    expect(expectProblem(await post(big), 413).detail).toMatch(/larger than 1 MiB/);
  });

  it("another media type → 415; a bad reftime → 400; an unknown one → 404; GET → 405", async () => {
    expectProblem(await post(feature(line), "", { "user-agent": "t", "content-type": "text/plain" }), 415);
    expectProblem(await post(feature(line), "?reftime=soon"), 400);
    expectProblem(await post(feature(line), "?reftime=2001-01-01T00:00:00Z"), 404);
    expectProblem(await http(m.server, "/route", { headers: { "user-agent": "t" } }), 405);
  });

  it("the CORS preflight allows a browser to POST GeoJSON", async () => {
    const res = await http(m.server, "/route", { method: "OPTIONS", headers: { "user-agent": "t", origin: "https://viewer.example", "access-control-request-method": "POST" } });
    expect(res.status).toBe(204);
    expect(header(res, "access-control-allow-methods")).toBe("POST");
    expect(header(res, "access-control-allow-headers")).toMatch(/Content-Type/);
  });
});
