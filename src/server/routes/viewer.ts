/** The map viewer (issue 7): static files of the release; it reads the data from the data endpoints. */
import type { Context, Hono } from "hono";
import { problemResponse } from "../problem.ts";
import { selectViewerFile } from "../select.ts";
import type { ReleaseView } from "../app.ts";
import { readOnlyRoutes, withSlash, type Responder } from "./respond.ts";

export function viewerRoutes(base: string, source: ReleaseView, respond: Responder): Hono {
  const viewerFile = (c: Context, file: string) => {
    const release = source.current;
    const selected = release && selectViewerFile(release, file);
    if (!selected) return problemResponse(404, release?.index.viewer ? `the viewer has no file ${file.slice(0, 100)}; it starts at ${base}/viewer/` : "no viewer is published yet: it comes with the first release");
    return respond.sendList(c, selected.artefact, selected.page ? respond.policies.viewerPage : respond.policies.viewerAsset);
  };
  return readOnlyRoutes([
    // Without the slash, its relative urls (`viewer.<hash>.js`, `../.json`) would resolve one level up.
    [`${base}/viewer`, withSlash(`${base}/viewer`)],
    [`${base}/viewer/`, (c) => viewerFile(c, "")],
    [`${base}/viewer/:file`, (c) => viewerFile(c, c.req.param("file") ?? "index.html")],
  ]);
}
