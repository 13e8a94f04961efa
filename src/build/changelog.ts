/**
 * The product's change feed: one event per publish, update and withdrawal of a run, saying what
 * changed, rendered as RSS 2.0 with `feed`. Events are kept in the build state so the feed carries
 * history across builds; bytes depend only on the events (no "now" inside).
 */
import { XMLParser } from "fast-xml-parser";
import { Feed } from "feed";
import type { AshModel } from "../contract/ashModel.ts";
import { withoutNonXmlCharacters } from "../formats/xmlCharacters.ts";
import { formatInstant, parseInstant } from "../time/instant.ts";

export type ChangeKind = "published" | "updated" | "withdrawn";

export interface ChangelogEvent {
  kind: ChangeKind;
  reftime: string;
  /** Run type at the time of the event, so an exercise never reads as a real eruption. */
  type: string;
  /** When the release with this change was built. */
  time: string;
  /** What changed, in a sentence or a few. */
  detail: string;
}

/** How many events the feed keeps: weeks of a busy eruption at four runs a day. */
export const MAX_CHANGELOG_EVENTS = 200;

/** Sentences saying how `after` differs from `before` (empty when nothing a client sees changed). */
export function describeChanges(before: AshModel, after: AshModel): string[] {
  const changes: string[] = [];
  if (before.meta.type !== after.meta.type) changes.push(`type changed from ${before.meta.type} to ${after.meta.type}`);
  if (before.meta.description !== after.meta.description) changes.push("description changed");
  if (JSON.stringify(before.meta.latlonbox) !== JSON.stringify(after.meta.latlonbox)) changes.push("bounding box changed");
  if (before.meta.report_url !== after.meta.report_url) changes.push("report url changed");
  const layers = (model: AshModel) => new Map(model.layergroups.flatMap((g) => g.layers.map((l) => [`${g.name} / ${l.name}`, l] as const)));
  const old = layers(before);
  const now = layers(after);
  for (const name of now.keys()) if (!old.has(name)) changes.push(`layer ${name} added`);
  for (const name of old.keys()) if (!now.has(name)) changes.push(`layer ${name} removed`);
  for (const [name, layer] of now) {
    const prior = old.get(name);
    if (!prior) continue;
    if (prior.timesteps.length !== layer.timesteps.length) {
      changes.push(`layer ${name}: ${prior.timesteps.length} → ${layer.timesteps.length} timesteps`);
    } else if (JSON.stringify(prior) !== JSON.stringify(layer)) {
      changes.push(`layer ${name} changed`);
    }
  }
  return changes;
}

export function publishedEvent(model: AshModel, time: string): ChangelogEvent {
  const layerCount = model.layergroups.reduce((n, g) => n + g.layers.length, 0);
  return {
    kind: "published",
    reftime: model.meta.reftime,
    type: model.meta.type,
    time,
    detail: `${sentence(model.meta.description)} ${layerCount} layer${layerCount === 1 ? "" : "s"}, ${model.meta.timesteps.length} timesteps.`,
  };
}

/** `changedResources`: names of the run's resources (KML per layer and time) whose content changed. */
export function updatedEvent(before: AshModel, after: AshModel, changedResources: readonly string[], time: string): ChangelogEvent {
  const changes = describeChanges(before, after);
  // A layer's KML and its GeoJSON twin are one layer; what changed in them may be areas, names or times.
  const layerFiles = [...new Set(changedResources.map((name) => name.split("/")[1]?.replace(/\.(?:kml|geojson)$/, "")).filter(Boolean))];
  if (layerFiles.length) changes.push(`ash area resources changed in ${layerFiles.join(", ")}`);
  return {
    kind: "updated",
    reftime: after.meta.reftime,
    type: after.meta.type,
    time,
    detail: changes.length ? `${capitalise(changes.join("; "))}.` : "Republished with new input files; the published content is unchanged.",
  };
}

export function withdrawnEvent(reftime: string, type: string, time: string): ChangelogEvent {
  return { kind: "withdrawn", reftime, type, time, detail: "The run was withdrawn and is no longer offered." };
}

/**
 * The time of this build's events: the build's own, or a second after the newest event when that is not
 * earlier (a clock stepped back, or two publishes in one second). Events stay newest first by date, and
 * `kind/reftime/time`, each item's guid, never names two items: a reader that has seen one never skips the other.
 */
export function eventTime(now: string, newest: string | undefined): string {
  const at = parseInstant(now)!;
  const last = newest === undefined ? undefined : parseInstant(newest);
  return last !== undefined && last >= at ? formatInstant(last + 1000) : now;
}

export interface FeedOptions {
  /** Absolute URL of the product base, e.g. `https://example.org/volcanicashforecast/0.1`. */
  publicUrl: string;
}

/** RSS 2.0 of the events, newest first. */
export function renderChangelog(events: readonly ChangelogEvent[], options: FeedOptions): string {
  const base = options.publicUrl.replace(/\/+$/, "");
  const feed = new Feed({
    title: "Volcanic ash forecast: changes",
    description: "Model runs published, updated and withdrawn by the volcanic ash forecast service.",
    id: `${base}/`,
    link: `${base}/`,
    language: "en",
    copyright: "CC BY 4.0",
    generator: "ashcast",
    // `updated` pins lastBuildDate: without it the feed would change on every build.
    updated: new Date(events[0]?.time ?? "1970-01-01T00:00:00Z"),
    feedLinks: { rss: `${base}/changelog` },
  });
  for (const event of events) {
    const link = event.kind === "withdrawn" ? `${base}/reftimes` : `${base}/?reftime=${event.reftime}`;
    feed.addItem({
      title: `${capitalise(event.kind)}: ${event.type} run ${event.reftime}`,
      id: `${event.kind}/${event.reftime}/${event.time}`,
      guid: `${event.kind}/${event.reftime}/${event.time}`,
      link,
      date: new Date(event.time),
      // Readers show a description as HTML: the text is escaped, so `<FL350>` is read as written and markup in a
      // run's description is never rendered; characters XML does not allow (from an older state) are dropped.
      description: escapeHtml(withoutNonXmlCharacters(event.detail)),
      category: [{ name: event.type }],
    });
  }
  return feed.rss2();
}

/**
 * The events of a feed renderChangelog wrote, newest first: what a build keeps of the changelog when the state
 * that held its events cannot be read (an older state format), so subscribers lose no history and see no run
 * announced again. Items that are not ours are skipped.
 */
export function eventsFromFeed(rss: string): ChangelogEvent[] {
  const parsed = new XMLParser({ isArray: (name) => name === "item", processEntities: true, htmlEntities: false, parseTagValue: false, textNodeName: "#text", ignoreAttributes: true }).parse(rss) as {
    rss?: { channel?: { item?: Array<{ guid?: unknown; category?: unknown; description?: unknown }> } };
  };
  const events: ChangelogEvent[] = [];
  for (const item of parsed.rss?.channel?.item ?? []) {
    const guid = textOf(item.guid);
    const [kind, reftime, time, ...rest] = (guid ?? "").split("/");
    if (rest.length > 0 || (kind !== "published" && kind !== "updated" && kind !== "withdrawn") || !reftime || parseInstant(reftime) === undefined || !time || parseInstant(time) === undefined) continue;
    const type = textOf(item.category) ?? "";
    const detail = unescapeHtml(textOf(item.description) ?? "");
    events.push({ kind, reftime, type, time, detail });
  }
  return events;
}

const textOf = (value: unknown): string | undefined =>
  typeof value === "string" ? value : typeof value === "object" && value !== null && typeof (value as { "#text"?: unknown })["#text"] === "string" ? (value as { "#text": string })["#text"] : undefined;

const unescapeHtml = (text: string): string => text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

const escapeHtml = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
