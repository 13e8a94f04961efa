/**
 * Writes the bundled sample runs into runs/ (deterministic: same script, same bytes).
 * Three Icelandic cases, one of each run type, shaped as forecasters' folders are: the dispersion model's
 * NetCDF output (EEMEP layout, or SNAP on a rotated-pole grid for the Katla rehearsal) and volcano.xml as
 * the model chain writes them, an advisory KML with ash areas per flight-level band and time, and WMS
 * layers of the model output with a saved GetCapabilities document.
 * Usage: npm run samples (node scripts/make-sample-runs.ts [runsDir], on the pinned Node 24)
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { formatInstant, parseInstant } from "../src/time/instant.ts";
import { writeEemepOutput, writeSnapOutput } from "./make-model-output.ts";

interface Case {
  folder: string;
  type: "Exercise" | "Rehearsal" | "Real Eruption";
  volcano: { name: string; lat: number; lon: number; altitude: number };
  reftime: string;
  eruptionStart: string;
  plumeTopM: number;
  rateKgPerS: number;
  /** Direction the ash travels to, degrees clockwise from north, and speed in km/h. */
  windTo: number;
  windKmh: number;
  description: string;
  reportUrl?: string;
  /** How WMS times are given: a saved capabilities document, or an explicit list. */
  wmsTimes: "capabilities" | "list";
  hours: number;
}

const CASES: Case[] = [
  {
    folder: "2010-04-15-eyjafjallajokull",
    type: "Real Eruption",
    volcano: { name: "Eyjafjallajokull", lat: 63.63, lon: -19.62, altitude: 1666 },
    reftime: "2010-04-15T06:00:00Z",
    eruptionStart: "2010-04-14T09:00:00Z",
    plumeTopM: 9000,
    rateKgPerS: 500000,
    windTo: 125,
    windKmh: 55,
    description:
      "Historical case replayed from the public record: explosive summit eruption of Eyjafjallajökull since 2010-04-14 09 UTC, plume to about 9 km; ash carried south-east towards the Faroe Islands, Scotland and Norway.",
    reportUrl: "https://en.vedur.is/earthquakes-and-volcanism/articles/nr/1884",
    wmsTimes: "capabilities",
    hours: 24,
  },
  {
    folder: "2026-03-14-hekla-exercise",
    type: "Exercise",
    volcano: { name: "Hekla", lat: 63.98, lon: -19.7, altitude: 1491 },
    reftime: "2026-03-14T06:00:00Z",
    eruptionStart: "2026-03-14T04:30:00Z",
    plumeTopM: 12000,
    rateKgPerS: 1500000,
    windTo: 60,
    windKmh: 70,
    description: "",
    wmsTimes: "capabilities",
    hours: 18,
  },
  {
    folder: "2026-05-02-katla-rehearsal",
    type: "Rehearsal",
    volcano: { name: "Katla", lat: 63.63, lon: -19.05, altitude: 1450 },
    reftime: "2026-05-02T12:00:00Z",
    eruptionStart: "2026-05-02T10:00:00Z",
    plumeTopM: 14000,
    rateKgPerS: 3000000,
    windTo: 95,
    windKmh: 60,
    description: "Rehearsal of the Katla sub-glacial eruption plan: plume to 14 km, ash towards the east; the WMS times are given in run.json.",
    wmsTimes: "list",
    hours: 18,
  },
];

const BANDS = [
  { name: "SFC/FL200", variable: "MAX6h_ASH_fl000-200", scale: 1.0, color: "ff00a5ff" },
  { name: "FL200/350", variable: "MAX6h_ASH_fl200-350", scale: 0.75, color: "ff0000ff" },
  { name: "FL350/550", variable: "MAX6h_ASH_fl350-550", scale: 0.45, color: "ff800080" },
] as const;

const HOUR = 3_600_000;
const KM_PER_DEG_LAT = 111.2;

/** A counter-clockwise ellipse (KML's safe orientation) around a centre, long axis along the wind. */
function plumeRing(lat: number, lon: number, alongKm: number, acrossKm: number, towardsDeg: number): string {
  const points: string[] = [];
  const heading = (towardsDeg * Math.PI) / 180;
  const kmPerDegLon = KM_PER_DEG_LAT * Math.cos((lat * Math.PI) / 180);
  for (let i = 0; i <= 24; i++) {
    const a = ((i % 24) / 24) * 2 * Math.PI; // counter-clockwise in the local east/north frame
    const along = alongKm * Math.cos(a);
    const across = acrossKm * Math.sin(a);
    const east = along * Math.sin(heading) - across * Math.cos(heading);
    const north = along * Math.cos(heading) + across * Math.sin(heading);
    points.push(`${(lon + east / kmPerDegLon).toFixed(3)},${(lat + north / KM_PER_DEG_LAT).toFixed(3)}`);
  }
  // The rotation above keeps the orientation (a rotation has determinant +1), so the ring stays counter-clockwise.
  return points.join(" ");
}

function advisoryKml(c: Case): string {
  const t0 = parseInstant(c.reftime)!;
  const steps = [0, 6, 12, 18].filter((h) => h <= c.hours);
  const folders = steps.map((h) => {
    const begin = formatInstant(t0 + h * HOUR);
    const end = formatInstant(t0 + (h + 6) * HOUR);
    const travelledKm = c.windKmh * (h + 3);
    const heading = (c.windTo * Math.PI) / 180;
    const centreNorth = (travelledKm / 2) * Math.cos(heading);
    const centreEast = (travelledKm / 2) * Math.sin(heading);
    const lat = c.volcano.lat + centreNorth / KM_PER_DEG_LAT;
    const lon = c.volcano.lon + centreEast / (KM_PER_DEG_LAT * Math.cos((c.volcano.lat * Math.PI) / 180));
    const placemarks = BANDS.map((band) => `      <Placemark>
        <name>${band.name}</name>
        <styleUrl>#band-${band.name.replace("/", "-")}</styleUrl>
        <ExtendedData><Data name="band"><value>${band.name}</value></Data></ExtendedData>
        <Polygon><outerBoundaryIs><LinearRing><coordinates>${plumeRing(lat, lon, (travelledKm / 2 + 40) * band.scale, (60 + 12 * h) * band.scale, c.windTo)}</coordinates></LinearRing></outerBoundaryIs></Polygon>
      </Placemark>`).join("\n");
    return `    <Folder>
      <name>${h === 0 ? "Observation" : `Forecast +${h}H`}</name>
      <TimeSpan><begin>${begin}</begin><end>${end}</end></TimeSpan>
${placemarks}
    </Folder>`;
  });
  const styles = BANDS.map((band) => `    <Style id="band-${band.name.replace("/", "-")}"><LineStyle><color>${band.color}</color><width>2</width></LineStyle><PolyStyle><color>40${band.color.slice(2)}</color></PolyStyle></Style>`).join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>
<kml xmlns="http://www.opengis.net/kml/2.2">
  <Document>
    <name>${c.volcano.name} ash advisory ${c.reftime}</name>
${styles}
    <Placemark>
      <name>${c.volcano.name}</name>
      <Point><coordinates>${c.volcano.lon},${c.volcano.lat},${c.volcano.altitude}</coordinates></Point>
    </Placemark>
${folders.join("\n")}
  </Document>
</kml>
`;
}

function volcanoXml(c: Case): string {
  const end = formatInstant(parseInstant(c.reftime)! + c.hours * HOUR);
  return `<?xml version="1.0" encoding="UTF-8"?>
<volcanic_eruption_run run_time_hours="${c.hours + 6}" output_directory="/lustre/storeB/project/fou/kl/emep/volcano/${c.folder}">
<model_setup use_restart_file="none">
   <weather_forecast reference_date="best" model_start_time="${c.reftime}"/>
</model_setup>
<volcano name="${c.volcano.name}" lat="${c.volcano.lat}" lon="${c.volcano.lon}" altitude="${c.volcano.altitude}" />
<eruptions>
<!-- bottom and top of ash-cloud in m above ground; rate in kg/s -->
<eruption start="${c.eruptionStart}" end="${end}" bottom="0" top="${c.plumeTopM}" rate="${c.rateKgPerS}" m63="0.1"/>
</eruptions>
</volcanic_eruption_run>
`;
}

function modelFile(c: Case): string {
  return `eemep_hour_${c.reftime.replace(/[-:]/g, "").replace("Z", "")}.nc`;
}

function wmsBase(c: Case, variable: string): string {
  return `https://thredds.example.org/thredds/wms/volcano/${c.folder}/${modelFile(c)}?LAYERS=${variable}&TRANSPARENT=true&LOGSCALE=false&BELOWMINCOLOR=transparent&ABOVEMAXCOLOR=extend`;
}

function hourlyTimes(c: Case): string[] {
  const t0 = parseInstant(c.reftime)!;
  return Array.from({ length: c.hours + 1 }, (_, h) => formatInstant(t0 + h * HOUR));
}

/** A GetCapabilities response of a THREDDS ncWMS serving the model file, cut to the ash layers. */
function capabilitiesXml(c: Case): string {
  const layers = BANDS.map((band) => `        <Layer queryable="1">
          <Name>${band.variable}</Name>
          <Title>Maximum 6-hour mean ash concentration, ${band.name}</Title>
          <EX_GeographicBoundingBox><westBoundLongitude>-45.0</westBoundLongitude><eastBoundLongitude>40.0</eastBoundLongitude><southBoundLatitude>30.0</southBoundLatitude><northBoundLatitude>76.0</northBoundLatitude></EX_GeographicBoundingBox>
          <Dimension name="time" units="ISO8601" multipleValues="true" current="true" default="${c.reftime.replace("Z", ".000Z")}">
            ${hourlyTimes(c).map((t) => t.replace("Z", ".000Z")).join(",")}
          </Dimension>
        </Layer>`).join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>
<WMS_Capabilities version="1.3.0" xmlns="http://www.opengis.net/wms" xmlns:xlink="http://www.w3.org/1999/xlink">
  <Service>
    <Name>WMS</Name>
    <Title>THREDDS ncWMS: ${modelFile(c)}</Title>
    <OnlineResource xlink:type="simple" xlink:href="https://thredds.example.org/thredds/wms/volcano/${c.folder}/${modelFile(c)}"/>
  </Service>
  <Capability>
    <Request>
      <GetCapabilities><Format>text/xml</Format></GetCapabilities>
      <GetMap><Format>image/png</Format></GetMap>
    </Request>
    <Exception><Format>XML</Format></Exception>
    <Layer>
      <Title>${modelFile(c)}</Title>
      <CRS>CRS:84</CRS>
      <Layer>
        <Title>Volcanic ash</Title>
${layers}
      </Layer>
    </Layer>
  </Capability>
</WMS_Capabilities>
`;
}

function manifest(c: Case): string {
  const wmsLayers = BANDS.map((band) => ({
    type: "WMS",
    name: `Model_EEMEP ${band.name}`,
    base_url: wmsBase(c, band.variable),
    ...(c.wmsTimes === "capabilities" ? { capabilities: "capabilities.xml" } : { times: hourlyTimes(c).filter((_, i) => i % 3 === 0) }),
  }));
  return `${JSON.stringify(
    {
      $schema: "../../templates/run.schema.json",
      type: c.type,
      reftime: c.reftime,
      ...(c.description ? { description: c.description } : {}),
      ...(c.reportUrl ? { report_url: c.reportUrl } : {}),
      layergroups: [
        { name: "Model_EEMEP", layers: wmsLayers },
        { name: "Forecaster advisory", layers: [{ type: "KML", name: "Ash areas per flight-level band", file: "advisory.kml" }] },
      ],
    },
    null,
    2,
  )}\n`;
}

const runsDir = path.resolve(process.argv[2] ?? "runs");
for (const c of CASES) {
  const dir = path.join(runsDir, c.folder);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  // The model output first (a coarse 0.5° grid: about 150 KB a file): the EEMEP writer leaves a volcano.xml of its own, replaced by this case's below.
  const model = { outDir: dir, reftime: c.reftime, steps: c.hours + 1, volcano: c.volcano, plumeTopM: c.plumeTopM };
  await (c.type === "Rehearsal" ? writeSnapOutput(model) : writeEemepOutput(model));
  await writeFile(path.join(dir, "run.json"), manifest(c));
  await writeFile(path.join(dir, "volcano.xml"), volcanoXml(c));
  await writeFile(path.join(dir, "advisory.kml"), advisoryKml(c));
  if (c.wmsTimes === "capabilities") await writeFile(path.join(dir, "capabilities.xml"), capabilitiesXml(c));
  process.stdout.write(`wrote ${dir}\n`);
}
