/**
 * Starts the HTTP server on the published release: the release source, the app, and the listener.
 * Everything is prepared before the first request (documents rendered, release loaded).
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createServer, type Server } from "node:http";
import { getRequestListener } from "@hono/node-server";
import { createApp, productBase } from "./app.ts";
import { createFastPath, type FastPath } from "./fastPath.ts";
import { openApiDocument } from "./openapi.ts";
import { ReleaseSource } from "./releaseSource.ts";
import { Representations } from "./representation.ts";

const TERMS_OF_SERVICE = fileURLToPath(new URL("../../templates/TermsOfService.html", import.meta.url));

export interface ServeOptions {
  distDir: string;
  port: number;
  host: string;
  prefix?: string;
  removedVersions?: readonly string[];
  log?: (line: string) => void;
}

export interface RunningServer {
  url: string;
  source: ReleaseSource;
  /** Requests answered by the fast path in front of the app. */
  fastPath: FastPath;
  close(): Promise<void>;
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? (() => {});
  const source = await ReleaseSource.open({ distDir: options.distDir, log });
  const representations = new Representations();
  const app = createApp({
    source,
    ...(options.prefix ? { prefix: options.prefix } : {}),
    ...(options.removedVersions ? { removedVersions: options.removedVersions } : {}),
    termsOfService: await readFile(TERMS_OF_SERVICE),
    openapi: Buffer.from(JSON.stringify(openApiDocument(options.prefix ? { prefix: options.prefix } : {}))),
    representations,
  });
  const fastPath = createFastPath({ source, base: productBase(options.prefix), representations });
  const answerWithApp = getRequestListener(app.fetch);
  const server: Server = createServer((req, res) => {
    if (!fastPath(req, res)) void answerWithApp(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}${options.prefix ?? ""}/volcanicashforecast/0.1`;
  return {
    url,
    source,
    fastPath,
    close: () =>
      new Promise<void>((resolve) => {
        source.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
