/**
 * Starts the HTTP server on the published release: the release source, the app, and the listener.
 * Everything is prepared before the first request (documents rendered, release loaded).
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { serve, type ServerType } from "@hono/node-server";
import { createApp } from "./app.ts";
import { openApiDocument } from "./openapi.ts";
import { ReleaseSource } from "./releaseSource.ts";

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
  close(): Promise<void>;
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? (() => {});
  const source = await ReleaseSource.open({ distDir: options.distDir, log });
  const app = createApp({
    source,
    ...(options.prefix ? { prefix: options.prefix } : {}),
    ...(options.removedVersions ? { removedVersions: options.removedVersions } : {}),
    termsOfService: await readFile(TERMS_OF_SERVICE),
    openapi: Buffer.from(JSON.stringify(openApiDocument(options.prefix ? { prefix: options.prefix } : {}))),
  });
  const server: ServerType = await new Promise((resolve, reject) => {
    const started = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, () => resolve(started));
    started.once("error", reject);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}${options.prefix ?? ""}/volcanicashforecast/0.1`;
  return {
    url,
    source,
    close: () =>
      new Promise<void>((resolve) => {
        source.close();
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
