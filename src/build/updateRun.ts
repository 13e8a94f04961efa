/**
 * One run folder brought up to date: its last outcome reused when its inputs are unchanged; otherwise
 * read, validated and rendered, its artefacts written into a run directory of their own.
 */
import { createHash, randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { RUN_ARTEFACTS_FILE, RUN_ARTEFACTS_FORMAT, type Artefact, type RunArtefacts } from "../contract/releaseIndex.ts";
import { sortKeys } from "../formats/sortKeys.ts";
import { compactInstant } from "../time/instant.ts";
import { ArtefactWriter, jsonBody, type ArtefactDraft } from "./artefacts.ts";
import { runPngKey } from "./artefactNames.ts";
import type { RunBuild, RunState } from "./buildState.ts";
import type { PipelineSettings } from "./pipelineSettings.ts";
import { createStagingDir, RUNS_DIR, type StagingDir } from "./releaseStore.ts";
import { renderRun, RUN_RENDERERS } from "./renderRun.ts";
import { inputsHash, unchangedSinceScan, type FolderFingerprints, type ScannedRun } from "./scanRuns.ts";
import { validateRun } from "./validateRun.ts";

export interface UpdateSettings extends PipelineSettings {
  distDir: string;
  /** An operator asked for a rebuild: read and render again although the inputs are unchanged. */
  forced: boolean;
}

/** Reuses a folder's last outcome when its inputs are unchanged; otherwise reads, validates and renders it. */
export async function updateRun(
  run: ScannedRun,
  prior: RunState | undefined,
  pipeline: string,
  priorFiles: FolderFingerprints,
  settings: UpdateSettings,
  rebuilding: (why: string) => void,
): Promise<RunState> {
  if (run.partial.length) {
    return {
      inputs: prior?.inputs ?? "",
      waiting: true,
      issues: [{ severity: "warning", file: `${run.folder}/${run.partial[0]}`, message: `files are still arriving (${run.partial.join(", ")})`, fix: "the run is built once every file still arriving (*.part, or rsync's hidden .name.XXXXXX) has its final name" }],
      ...(prior?.lastGood ? { lastGood: prior.lastGood } : {}),
    };
  }
  const inputs = inputsHash(run, pipeline);
  const unchanged = prior !== undefined && prior.inputs === inputs && !prior.waiting;
  if (unchanged && !settings.forced) return prior;
  rebuilding(unchanged ? "an operator asked for a rebuild" : whyRebuild(run, prior, priorFiles));

  let read: Awaited<ReturnType<typeof validateRun>>;
  let drafts: ArtefactDraft[] = [];
  // The run's files are written into a staging directory as they are rendered, renamed into place once all are.
  let staging: { staged: StagingDir; writer: ArtefactWriter; dirName: string; dirFromDist: string } | undefined;
  const discard = async (): Promise<void> => {
    if (!staging) return;
    await staging.writer.stop();
    await staging.staged.discard();
  };
  try {
    read = await validateRun(run, settings);
    if (read.assembled) {
      // Same inputs make the same directory name; a requested rebuild must not trust what is there.
      const dirName = `${compactInstant(read.assembled.model.meta.reftime)}-${inputs.slice(0, 16)}${settings.forced ? `-${randomBytes(4).toString("hex")}` : ""}`;
      const dirFromDist = path.posix.join(RUNS_DIR, dirName);
      const staged = await createStagingDir(settings.distDir, RUNS_DIR);
      const writer = new ArtefactWriter(staged.dir, dirFromDist);
      staging = { staged, writer, dirName, dirFromDist };
      drafts = await renderRun(read.assembled, RUN_RENDERERS, (rendered) => writer.add(rendered));
    }
  } catch (error) {
    await discard();
    // Files that changed or went away while being read (a folder renamed or withdrawn, a file half-moved) fail
    // in many ways: this run waits for the next build, the others publish. Anything else is not the files' doing.
    if (!(await unchangedSinceScan(run))) return changedWhileRead(run, prior);
    throw error;
  }
  const { issues, assembled } = read;
  const base: RunState = { inputs, waiting: false, issues: issues.list, ...(prior?.lastGood ? { lastGood: prior.lastGood } : {}) };
  if (!assembled || !staging) return base;

  const reftime = assembled.model.meta.reftime;
  // Its inputs hash no longer names what was read: build it again once the files are still.
  if (!(await unchangedSinceScan(run))) {
    await discard();
    return changedWhileRead(run, prior);
  }
  const { staged, writer, dirName, dirFromDist } = staging;
  let artefacts: Record<string, Artefact>;
  try {
    artefacts = await writer.entries(drafts);
    const resources = Object.fromEntries(drafts.flatMap((d) => (d.resourceName ? [[d.resourceName, d.key]] : [])));
    const list: RunArtefacts = { format: RUN_ARTEFACTS_FORMAT, reftime, artefacts: sortKeys(artefacts), resources: sortKeys(resources) };
    await writeFile(path.join(staged.dir, RUN_ARTEFACTS_FILE), jsonBody(list));
    await staged.commit(dirName);
  } catch (error) {
    await discard();
    throw error;
  }
  const current: RunBuild = {
    inputs,
    reftime,
    type: assembled.model.meta.type,
    contentSha256: contentHash(artefacts),
    dir: dirFromDist,
    json: drafts[0]!.key,
    ...(drafts.some((d) => d.key === runPngKey(reftime)) ? { png: runPngKey(reftime) } : {}),
    ...(assembled.volcano ? { volcano: { name: assembled.volcano.name, lat: assembled.volcano.lat, lon: assembled.volcano.lon } } : {}),
  };
  return { ...base, current };
}

/** A run whose files changed or went away while they were read: waiting for the next build, its last good version kept. */
function changedWhileRead(run: ScannedRun, prior: RunState | undefined): RunState {
  return {
    inputs: "",
    waiting: true,
    issues: [{ severity: "warning", file: run.folder, message: "files changed while they were being read", fix: "nothing to do: the run is built again from its new files" }],
    ...(prior?.lastGood ? { lastGood: prior.lastGood } : {}),
  };
}

function whyRebuild(run: ScannedRun, prior: RunState | undefined, priorFiles: FolderFingerprints): string {
  if (!prior) return "new run folder";
  if (prior.waiting) return "its files have arrived";
  const now = new Map(run.files.map((f) => [f.name, f.sha256]));
  const changed: string[] = [];
  const priorNames = Object.keys(priorFiles);
  for (const name of priorNames) {
    if (!now.has(name)) changed.push(`${name} removed`);
    else if (now.get(name) !== priorFiles[name]!.sha256) changed.push(`${name} changed`);
  }
  for (const name of now.keys()) if (!priorNames.includes(name)) changed.push(`${name} added`);
  // Entries that are not read (a link, a folder, a pipe, a name that is not UTF-8) change the run's outcome too.
  for (const refused of run.refused) changed.push(`${refused.name === "." ? "the folder" : refused.name} refused`);
  return changed.length ? changed.join(", ") : "the pipeline or its configuration changed";
}

/** One hash for everything a run publishes: equal hashes mean clients see exactly the same run. */
export function contentHash(artefacts: Readonly<Record<string, Artefact>>): string {
  const hash = createHash("sha256");
  for (const key of Object.keys(artefacts).sort()) hash.update(`${key}\0${artefacts[key]!.sha256}\n`);
  return hash.digest("hex");
}
