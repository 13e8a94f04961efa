/**
 * The run's PNG map (`/.png` of the API): one small multiple per flight-level band, each showing the
 * forecast maximum over the whole run, with one legend, a title and the run type impossible to miss.
 */
import type { LatLonBoxModel, RunType } from "../contract/ashModel.ts";
import type { ThresholdBand } from "../geo/types.ts";
import { FLIGHT_LEVEL_BANDS } from "../model/types.ts";
import { noValueText } from "../contract/missingValues.ts";
import { getBaseMap } from "./basemap.ts";
import { drawPanel, exactColours, projectAreas, type Rect, type Volcano } from "./draw.ts";
import { drawFooter, frameMetrics, startImage, MARGIN, panelHeightFor, type DrawnImage, type FrameMetrics } from "./layout.ts";
import { capitalised, formatInstant, outputsText } from "./style.ts";
import { encodePng } from "./png.ts";

export interface RunMapInput {
  type: RunType;
  volcano?: Volcano | undefined;
  reftime: string;
  /** The model's output times the maximum is taken over, ascending. */
  times: readonly string[];
  box: LatLonBoxModel;
  thresholds: readonly number[];
  /** What each band's field is, from the model output (src/model/fieldMeaning.ts). */
  quantity: string;
  /** `worstMissingShare`: the largest share of the grid the model gave no value at one step, when some cells had none. */
  bands: Array<{ label: string; areas: ThresholdBand[]; worstMissingShare?: number | undefined }>;
}

export interface RunMapLayout {
  width: number;
  height: number;
  metrics: FrameMetrics;
  /** One per band, left to right, in image pixels. */
  panels: Rect[];
}

/** The nominal image width (three panels of 384 px). */
export const RUN_MAP_WIDTH = 1200;
const PANEL_WIDTH = 384;
const GAP = 12;

/** Where everything goes: image size and the panel of each band. */
export function runMapLayout(input: { type: RunType; box: LatLonBoxModel; thresholds: readonly number[]; quantity: string; bandCount: number }): RunMapLayout {
  const n = Math.max(1, input.bandCount);
  const width = n <= 3 ? RUN_MAP_WIDTH : 2 * MARGIN + n * PANEL_WIDTH + (n - 1) * GAP;
  const panelW = n <= 3 ? Math.floor((RUN_MAP_WIDTH - 2 * MARGIN - 2 * GAP) / 3) : PANEL_WIDTH;
  const panelH = panelHeightFor(input.box, panelW, 0.78, 1.2);
  const metrics = frameMetrics(input.type, width, input.thresholds, input.quantity, { banner: 44, title: 70 });
  const top = metrics.bannerHeight + metrics.titleHeight;
  const rowWidth = n * panelW + (n - 1) * GAP;
  const left = Math.round((width - rowWidth) / 2);
  const panels = Array.from({ length: n }, (_, i) => ({ x: left + i * (panelW + GAP), y: top, w: panelW, h: panelH }));
  return { width, height: top + panelH + metrics.footerHeight, metrics, panels };
}

/** Draws the run map and encodes it; the same input always gives the same bytes. */
export async function renderRunMap(input: RunMapInput): Promise<Buffer> {
  const drawn = drawRunMap(input);
  return encodePng(drawn.ctx, drawn.width, drawn.height, { keep: drawn.keep });
}

/** Draws the run map (renderRunMap encodes it). */
export function drawRunMap(input: RunMapInput): DrawnImage {
  // No bands at all: still three empty panels, so the image says "no ash" for every flight level.
  const bands: RunMapInput["bands"] = input.bands.length > 0 ? input.bands : FLIGHT_LEVEL_BANDS.map((b) => ({ label: b.label, areas: [] }));
  const layout = runMapLayout({ type: input.type, box: input.box, thresholds: input.thresholds, quantity: input.quantity, bandCount: bands.length });
  const name = input.volcano?.name ?? "Volcanic ash";
  const { ctx } = startImage(
    layout,
    input.type,
    `${name} · volcanic ash forecast, highest value over the run`,
    `${capitalised(input.quantity)}: highest of ${outputsText(input.times)}   ·   Model run ${formatInstant(input.reftime)}`,
    { headline: 20, subline: 14 },
  );

  const first = layout.panels[0]!;
  const base = getBaseMap(input.box, first.w, first.h);
  bands.forEach((band, i) => {
    const missing = band.worstMissingShare === undefined ? undefined : noValueText(band.worstMissingShare, true);
    drawPanel(ctx, layout.panels[i]!, { base, label: band.label, areas: projectAreas(base.projection, band.areas, input.thresholds), thresholds: input.thresholds, type: input.type, volcano: input.volcano, missing });
  });

  drawFooter(ctx, layout.width, first.y + first.h, layout.metrics, input.thresholds, input.quantity);
  return { ctx, width: layout.width, height: layout.height, keep: exactColours(base.colours, input.thresholds, input.type) };
}
