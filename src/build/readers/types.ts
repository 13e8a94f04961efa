/**
 * One reader per input kind found in a run folder. The pipeline offers every file to the readers;
 * a reader that accepts a file reads and validates it, and returns what it found, or undefined after
 * recording why the file is unusable. A new input kind is a new reader plus its case in assembleRun
 * (NetCDF model output came that way: readers/modelOutput.ts).
 */
import type { LatLonBoxModel } from "../../contract/ashModel.ts";
import type { KmlFeatures } from "../../geo/forecasterGeoJson.ts";
import type { ThresholdBand } from "../../geo/types.ts";
import type { FieldMeaning } from "../../model/fieldMeaning.ts";
import type { FlightLevelBand, ModelOutput } from "../../model/types.ts";
import type { Issues } from "../issues.ts";
import type { RecordedPointGrid } from "../pointGrids.ts";
import type { RunManifest } from "../runManifest.ts";

export interface RunInputFile {
  /** File name inside the run folder, e.g. `advisory.kml`. */
  name: string;
  /** Path relative to the runs directory, used in every message: `2024-05-hekla/advisory.kml`. */
  displayPath: string;
  absolutePath: string;
  size: number;
  /** The whole file. Readers of large formats read ranges themselves from absolutePath instead. */
  bytes(): Promise<Buffer>;
}

/** An eruption as described by the model chain's volcano.xml. */
export interface VolcanoDescription {
  name: string;
  lat: number;
  lon: number;
  /** Vent altitude, metres above sea level. */
  altitudeM?: number;
  eruptions: Array<{
    /** Normalised instants (YYYY-MM-DDTHH:MM:SSZ). */
    start: string;
    end: string;
    /** Bottom and top of the ash column, metres above the vent. */
    bottomM: number;
    topM: number;
    rateKgPerS?: number;
    m63?: number;
  }>;
  /** weather_forecast/@model_start_time, normalised, when given. */
  modelStartTime?: string;
  runTimeHours?: number;
}

export interface KmlDocument {
  /** Document (or first Folder) name, when the KML has one. */
  name?: string;
  /** Sorted, distinct, normalised instants: every TimeStamp `when` and TimeSpan `begin`. Empty when untimed. */
  times: string[];
  /** Extent of every coordinate in the document; undefined when it has none. */
  extent?: LatLonBoxModel;
  /** The whole document, as given. */
  whole: Buffer;
  /**
   * A well-formed KML holding only what is valid at `time`: features whose TimeSpan contains it
   * (begin <= time < end, open ends allowed) or whose TimeStamp equals it, plus untimed features.
   * Deterministic bytes.
   */
  forTime(time: string): Buffer;
  /**
   * The Placemarks, and the features with no GeoJSON counterpart, that forTime(time) keeps (all of them
   * without a time), in document order, as read for the GeoJSON twin.
   */
  features(time?: string): KmlFeatures;
}

export interface WmsCapabilitiesLayer {
  /** `<Name>` of the layer; layers without a name (pure categories) are not listed. */
  name: string;
  title?: string;
  /** Raw text of the time Dimension (WMS 1.3.0) or time Extent (1.1.1), inherited from parent layers. */
  timeDimension?: string;
  /** EX_GeographicBoundingBox (1.3.0) or LatLonBoundingBox (1.1.1), inherited. */
  extent?: LatLonBoxModel;
}

export interface WmsCapabilities {
  /** The document's version attribute, e.g. `1.3.0`. */
  version: string;
  layers: WmsCapabilitiesLayer[];
}

/** One flight-level variable of a model output file, contoured at every step and over the whole run. */
export interface ModelBandAnalysis {
  band: FlightLevelBand;
  variable: string;
  /** What the field is, e.g. `maximum of 6-hour mean ash concentration` (src/model/fieldMeaning.ts). */
  meaning: FieldMeaning;
  /**
   * Ash areas per time step; `end` is the next step's time (the last step lasts as long as the one before);
   * `missingShare`, only where some cells have no value (fill value or NaN), the share of the grid they are.
   */
  steps: Array<{ time: string; end: string; areas: ThresholdBand[]; missingShare?: number }>;
  /** Ash areas of the maximum over all steps (the run's map). */
  maximum: ThresholdBand[];
  /** The largest `missingShare` of any step, when one has cells without a value. */
  worstMissingShare?: number;
}

/** What a model output file holds, read and checked in full once, contoured per band and step. */
export interface ModelOutputAnalysis {
  layout: ModelOutput["layout"];
  times: string[];
  domain: LatLonBoxModel;
  /** The run start written in the file name (`eemep_hour_20190322T153201.nc`), when there is one. */
  fileTimestamp?: string;
  simulationStart?: string;
  title?: string;
  thresholds: readonly number[];
  bands: ModelBandAnalysis[];
  /** Where any band reaches the lowest threshold at any step; undefined when no ash reaches it. */
  ashExtent?: LatLonBoxModel;
  /**
   * Every band at every step, coded for point queries; absent when the grid has no geometry to look points up in.
   * Still being compressed when the reading ends: the maps need not wait for the last band's blocks.
   */
  pointGrid?: Promise<RecordedPointGrid>;
}

/** Settings readers need from the build configuration. */
export interface ReaderContext {
  /** Concentration thresholds (mg/m³, ascending) of the ash areas drawn from model output. */
  thresholds: readonly number[];
}

export type InputReading =
  | { kind: "manifest"; file: RunInputFile; manifest: RunManifest }
  | { kind: "volcano"; file: RunInputFile; volcano: VolcanoDescription }
  | { kind: "kml"; file: RunInputFile; kml: KmlDocument }
  | { kind: "wms-capabilities"; file: RunInputFile; capabilities: WmsCapabilities }
  | { kind: "model-output"; file: RunInputFile; model: ModelOutputAnalysis };

export interface InputReader {
  kind: InputReading["kind"];
  /** Whether this reader handles the file, from its name and first bytes (at most 512). */
  accepts(file: RunInputFile, head: Buffer): boolean;
  /** Reads and validates one file; problems go to `issues` naming the file and field. */
  read(file: RunInputFile, issues: Issues, context?: ReaderContext): Promise<InputReading | undefined>;
}
