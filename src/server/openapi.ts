/**
 * The OpenAPI 3.1 document of the service, generated from the same zod schemas that validate the
 * artefacts at build time, so the description cannot drift from what is served.
 */
import { z } from "zod";
import { AshModel, RefTimeModel } from "../contract/ashModel.ts";
import { BuildReport } from "../contract/buildReport.ts";
import { DatasetsBody } from "../contract/cachePurges.ts";
import { Job } from "../contract/jobs.ts";
import { PointAnswer, RouteAnswer, RouteRequest } from "../contract/queries.ts";
import { InvalidUploadProblem, Problem, PROBLEM_CONTENT_TYPE } from "../contract/problem.ts";
import { RuntimeSettings } from "../operator/settings.ts";
import { PRODUCT_PATH } from "./app.ts";

const schemaOf = (schema: z.ZodType): Record<string, unknown> => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12" }) as Record<string, unknown>;
  return rest;
};

/**
 * The published models as the specification states them: no field required, and open to added fields
 * (adding a field is not a breaking change in this API family). The build still checks the strict form.
 */
function openModel(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(openModel);
  if (schema === null || typeof schema !== "object") return schema;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "required" || (key === "additionalProperties" && value === false)) continue;
    result[key] = openModel(value);
  }
  return result;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const problem = (description: string) => ({ description, content: { [PROBLEM_CONTENT_TYPE]: { schema: ref("Problem") } } });
const noContent = { description: "No run is published" };
const notModified = { description: "Not modified: the validators of the request match" };
const JSON_TYPE = "application/json;charset=UTF-8";

const reftimeParameter = {
  name: "reftime",
  in: "query",
  required: false,
  description: "Reference time of the run, any ISO 8601 date-time with a zone (values from /reftimes); the latest run when omitted",
  schema: { type: "string", format: "date-time" },
};

/** What the access rules answer for a protected request (a mutating method anywhere, by default). */
const authErrors = {
  "400": problem("A path that cannot be read, or a malformed Authorization header"),
  "401": problem("Sign-in needed: a bearer token from /token (WWW-Authenticate: Bearer)"),
  "403": problem("The token's user lacks the role this address needs"),
};

/** Every error status the specification lists for the data endpoints, each with the problem body. */
const dataErrors = {
  "400": problem("Malformed parameter"),
  "401": problem("Authentication needed"),
  "403": problem("Forbidden, or the client is blocked"),
  "404": problem("No run for this reftime, no such resource, or a removed version"),
  "405": problem("Method not allowed"),
  "422": problem("Request outside the product's domain"),
  "429": problem("Too many requests, or the client did not identify itself"),
  "500": problem("Internal error"),
  "502": problem("Bad gateway"),
  "503": problem("Service unavailable"),
  "504": problem("Gateway timeout"),
};

/** What the traffic guard in front of every route may answer (issue 6): blocked, throttled or unidentified, and plain HTTP. */
const throttleHeaders = {
  "Retry-After": { description: "Seconds to wait", schema: { type: "integer" } },
  "RateLimit-Policy": { description: 'The limit of this route class (IETF draft), e.g. `"data";q=100;w=5`', schema: { type: "string" } },
  RateLimit: { description: 'What is left of it, e.g. `"data";r=0;t=3` (on throttled answers)', schema: { type: "string" } },
};
const trafficErrors = {
  "301": { description: "Over plain HTTP (GET, HEAD): the same address over https (Location)" },
  "403": problem("The client is blocked; over plain HTTP, a request that carries credentials or a body"),
  "429": { ...problem("Too many requests from this client (User-Agent and address) for this route class, or no User-Agent: identify your client (see /doc/TermsOfService)"), headers: throttleHeaders },
};

/** Every operation lists the traffic guard's answers; statuses it documents itself keep their text, with the guard's body added. */
function withTrafficAnswers(paths: Record<string, unknown>): Record<string, unknown> {
  for (const operations of Object.values(paths) as Array<Record<string, { responses: Record<string, Record<string, unknown>> }>>) {
    for (const operation of Object.values(operations)) {
      for (const [status, answer] of Object.entries(trafficErrors)) {
        const own = operation.responses[status];
        if (own === undefined) operation.responses[status] = answer;
        else if (status === "429") {
          const content = { ...(answer as { content: object }).content, ...(own.content as object | undefined) };
          operation.responses[status] = { ...own, description: `${String(own.description)}; or ${answer.description.charAt(0).toLowerCase()}${answer.description.slice(1)}`, content, headers: throttleHeaders };
        } else if (status === "403") operation.responses[status] = { ...own, description: `${String(own.description)}; or ${answer.description.charAt(0).toLowerCase()}${answer.description.slice(1)}` };
      }
    }
  }
  return paths;
}

const oauthError = (description: string) => ({ description, content: { [JSON_TYPE]: { schema: ref("OAuthError") } } });

function login(summary: string): Record<string, unknown> {
  return {
    post: {
      summary,
      tags: ["auth"],
      requestBody: {
        required: true,
        content: {
          "application/x-www-form-urlencoded": {
            schema: {
              type: "object",
              properties: { username: { type: "string" }, password: { type: "string" }, grant_type: { const: "password" } },
              required: ["username", "password"],
            },
          },
        },
      },
      responses: {
        "200": { description: "The token (RFC 6749 §5.1); never cached", content: { [JSON_TYPE]: { schema: ref("TokenResponse") } } },
        "400": oauthError("Missing or repeated field, wrong username or password, or another grant type (RFC 6749 §5.2)"),
        "401": problem("Sign-in needed for methods other than POST (deny by default)"),
        "405": problem("Method not allowed"),
        "413": oauthError("The form is too large"),
        "415": oauthError("Not a form body"),
        "429": oauthError("Too many failed logins for this account: wait Retry-After seconds"),
        "500": problem("Internal error"),
      },
    },
  };
}

export function openApiDocument(options: { prefix?: string } = {}): Record<string, unknown> {
  const modelResponses = {
    "200": {
      description: "The run: its JSON description, or its PNG map",
      content: { [JSON_TYPE]: { schema: ref("AshModel") }, "image/png": { schema: { type: "string", contentMediaType: "image/png" } } },
    },
    "204": noContent,
    "304": notModified,
    ...dataErrors,
  };
  const settingsAnswer = {
    description: "The upload limits in effect, and the settings changed from the defaults",
    content: { [JSON_TYPE]: { schema: { type: "object", properties: { uploadLimits: { type: "object" }, changedSettings: ref("RuntimeSettings") }, required: ["uploadLimits", "changedSettings"] } } },
  };
  const noBuilder = problem("This server does not run the builder (use ashcast start)");
  const jobId = { name: "id", in: "path", required: true, description: "The job's id, as POST /jobs answered it", schema: { type: "string" } };
  const get = (summary: string, tag: string, responses: Record<string, unknown>, parameters: unknown[] = []) => ({
    get: { summary, tags: [tag], parameters, responses },
  });
  return {
    openapi: "3.1.0",
    info: {
      title: "Volcanic ash forecast",
      version: "0.1",
      description: "Volcanic ash forecast runs (Exercise, Rehearsal, Real Eruption) with their WMS and KML layers. Data under CC BY 4.0; clients must identify themselves in User-Agent (see /doc/TermsOfService).",
      license: { name: "CC BY 4.0", url: "https://creativecommons.org/licenses/by/4.0/" },
      termsOfService: "doc/TermsOfService",
    },
    servers: [{ url: `${options.prefix ?? ""}${PRODUCT_PATH}` }],
    tags: [{ name: "data" }, { name: "metadata" }, { name: "auth" }, { name: "operator" }],
    paths: withTrafficAnswers({
      "/token": login("Sign in: a bearer token for a user's username and password (OAuth 2.0 password grant)"),
      "/login": login("The same as /token"),
      "/": get("The run for a reftime, or the latest (JSON, or PNG by Accept)", "data", modelResponses, [reftimeParameter]),
      "/.json": get("The run as JSON", "data", modelResponses, [reftimeParameter]),
      "/.png": get("The run as a PNG map", "data", modelResponses, [reftimeParameter]),
      "/reftimes": get("The reftimes that can be requested, newest first", "data", {
        "200": { description: "Reftimes", content: { [JSON_TYPE]: { schema: { type: "array", items: ref("RefTimeModel") } } } },
        "204": noContent,
        "304": notModified,
        ...dataErrors,
      }),
      "/resources": get("A named resource (a KML layer per time, volcanoes.json), or the list of names", "data", {
        "200": {
          description: "The resource, or without name the list of names",
          content: {
            [JSON_TYPE]: { schema: {} },
            "application/vnd.google-earth.kml+xml;charset=UTF-8": { schema: { type: "string" } },
            "image/png": { schema: { type: "string", contentMediaType: "image/png" } },
          },
        },
        "204": noContent,
        "304": notModified,
        ...dataErrors,
      }, [{ name: "name", in: "query", required: false, description: "Name of the resource, as listed without it", schema: { type: "string" } }]),
      "/point": get(
        "The ash concentration at a place: per model and flight-level band, every step of the run (or the step valid at `time`), with its class. The value is that of the model grid cell the place lies in",
        "data",
        {
          "200": { description: "The value series", content: { [JSON_TYPE]: { schema: ref("PointAnswer") } } },
          "204": noContent,
          "304": notModified,
          ...dataErrors,
          "400": problem("lat or lon missing, malformed or out of range; time or reftime malformed; a parameter given twice"),
          "422": problem("The place is outside the domain of every model of the run, time is outside its forecast, or the run has no model output"),
        },
        [
          { name: "lat", in: "query", required: true, description: "Latitude, decimal degrees, -90..90", schema: { type: "string", pattern: "^[+-]?(\\d+(\\.\\d*)?|\\.\\d+)$" } },
          { name: "lon", in: "query", required: true, description: "Longitude, decimal degrees, -180..180", schema: { type: "string", pattern: "^[+-]?(\\d+(\\.\\d*)?|\\.\\d+)$" } },
          { name: "time", in: "query", required: false, description: "An instant (ISO 8601 with a zone): only the step valid then", schema: { type: "string", format: "date-time" } },
          reftimeParameter,
        ],
      ),
      "/route": {
        post: {
          summary:
            "What a flight meets along its path: a GeoJSON LineString of [lon, lat, altitude_m] (altitude as pressure altitude), followed along great circles and sampled at most half a grid cell apart; with properties.coordTimes, the encounters (entry, exit, band, highest value, class); without, the highest value along the path per step",
          tags: ["data"],
          parameters: [reftimeParameter],
          requestBody: {
            required: true,
            content: { "application/geo+json": { schema: ref("RouteRequest") }, "application/json": { schema: ref("RouteRequest") } },
          },
          responses: {
            "200": { description: "Per model: samples, encounters or per-step values, and where nothing is known", content: { [JSON_TYPE]: { schema: ref("RouteAnswer") } } },
            "204": noContent,
            ...dataErrors,
            "400": problem("The body is not JSON, or reftime is malformed"),
            "404": problem("No run for this reftime"),
            "413": problem("The body is over 1 MiB, or the LineString has more than 10,000 positions"),
            "415": problem("The body is not application/geo+json (or application/json)"),
            "422": problem("Not a Feature with a LineString of [lon, lat, altitude_m], coordTimes not one instant per position in order, the route needs more than 50,000 samples at half a grid cell, or the run has no model output"),
          },
        },
      },
      "/changelog": get("RSS feed of runs published, updated and withdrawn", "metadata", {
        "200": { description: "RSS 2.0", content: { "application/rss+xml;charset=UTF-8": { schema: { type: "string" } } } },
        "204": noContent,
        "304": notModified,
        "405": dataErrors["405"],
        ...authErrors,
      }),
      "/datasets": {
        get: {
          summary: "Every run folder with its state, validation problems, duplicates and variant conflicts (the build report); operators only",
          tags: ["operator"],
          security: [{ bearer: [] }],
          responses: {
            "200": { description: "The report of the last build, and the recent purges of shared caches when the service publishes with --purge", content: { [JSON_TYPE]: { schema: ref("Datasets") } } },
            "204": { description: "No release is published yet" },
            ...authErrors,
            "405": dataErrors["405"],
            "500": dataErrors["500"],
          },
        },
      },
      "/config": {
        ...get("The effective configuration of this server, secrets left out", "metadata", {
          "200": { description: "JSON", content: { [JSON_TYPE]: { schema: { type: "object" } } } },
          "304": notModified,
          "405": dataErrors["405"],
          ...authErrors,
        }),
        post: {
          summary: "Change settings an operator may change (upload limits), persisted; operators only",
          tags: ["operator"],
          security: [{ bearer: [] }],
          requestBody: { required: true, content: { [JSON_TYPE]: { schema: ref("RuntimeSettings") } } },
          responses: {
            "200": settingsAnswer,
            ...authErrors,
            "400": problem("Not a JSON object of known settings within their ranges (the detail names each key and range), or a malformed Authorization header"),
            "405": dataErrors["405"],
            "413": problem("Larger than 4 KiB"),
            "415": problem("Not application/json"),
            "500": dataErrors["500"],
            "503": problem("This server does not run the pipeline (use ashcast start)"),
          },
        },
      },
      "/config/reset": {
        post: {
          summary: "Return every setting to its default (the settings file is removed); operators only",
          tags: ["operator"],
          security: [{ bearer: [] }],
          responses: { "200": settingsAnswer, ...authErrors, "405": dataErrors["405"], "500": dataErrors["500"], "503": problem("This server does not run the pipeline (use ashcast start)") },
        },
      },
      "/withdraw": {
        post: {
          summary: "Withdraw the run of a reftime: its folders leave runs/ for the archive, the next build withdraws it; operators only",
          tags: ["operator"],
          security: [{ bearer: [] }],
          parameters: [{ ...reftimeParameter, required: true, description: "Reference time of the run to withdraw, any ISO 8601 spelling" }],
          responses: {
            "202": {
              description: "Moved; the next build publishes the withdrawal",
              content: { [JSON_TYPE]: { schema: { type: "object", properties: { reftime: { type: "string" }, withdrawn: { type: "array", items: { type: "string" } }, note: { type: "string" } } } } },
            },
            ...authErrors,
            "404": problem("No run folder has this reftime"),
            "405": dataErrors["405"],
            "500": dataErrors["500"],
            "503": problem("This server does not watch runs/ (use ashcast start)"),
          },
        },
      },
      "/upload": {
        post: {
          summary: "Upload a run: its files as a multipart form, or one zip archive; validated as a build would, then moved into runs/ whole; operators only",
          tags: ["operator"],
          security: [{ bearer: [] }],
          parameters: [{ name: "folder", in: "query", required: false, description: "Name of the run folder to create (default: from the zip's folder, else <reftime>-upload-<time>)", schema: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$" } }],
          requestBody: {
            required: true,
            content: {
              "multipart/form-data": { schema: { type: "object", properties: { folder: { type: "string" }, file: { type: "array", items: { type: "string", format: "binary" } } } } },
              "application/zip": { schema: { type: "string", format: "binary" } },
            },
          },
          responses: {
            "202": {
              description: "Valid, and in runs/; the watcher publishes it",
              content: { [JSON_TYPE]: { schema: { type: "object", properties: { folder: { type: "string" }, reftime: { type: "string" }, type: { type: "string" }, warnings: { type: "array" }, url: { type: "string" }, note: { type: "string" } } } } },
            },
            ...authErrors,
            "400": problem("Not a readable upload (a file name with a path, a nested or unsafe archive entry, a bad folder name, no file), a path that cannot be read, or a malformed Authorization header"),
            "405": dataErrors["405"],
            "409": problem("The folder exists already; an upload never replaces one"),
            "413": problem("Larger than the upload limit, or too many files"),
            "415": problem("Neither multipart/form-data nor application/zip"),
            "422": { description: "The run is not valid; nothing was published", content: { [PROBLEM_CONTENT_TYPE]: { schema: ref("InvalidUploadProblem") } } },
            "507": problem("No space left on the server to store the upload; nothing was kept"),
            "500": dataErrors["500"],
            "503": problem("This server does not watch runs/ (use ashcast start)"),
          },
        },
      },
      "/jobs": {
        get: {
          summary: "The jobs, newest first (finished ones for a while; the audit log keeps all); operators only",
          tags: ["operator"],
          security: [{ bearer: [] }],
          responses: { "200": { description: "JSON", content: { [JSON_TYPE]: { schema: { type: "object", properties: { jobs: { type: "array", items: ref("Job") } }, required: ["jobs"] } } } }, ...authErrors, "405": dataErrors["405"], "500": dataErrors["500"], "503": noBuilder },
        },
        post: {
          summary: "Submit a job: rebuild every run or one run folder (read and drawn again although unchanged), or clean up old releases and temporaries; operators only",
          tags: ["operator"],
          security: [{ bearer: [] }],
          requestBody: {
            required: true,
            content: { [JSON_TYPE]: { schema: { oneOf: [{ type: "object", properties: { kind: { const: "rebuild" }, run: { type: "string" } }, required: ["kind"], additionalProperties: false }, { type: "object", properties: { kind: { const: "cleanup" } }, required: ["kind"], additionalProperties: false }] } } },
          },
          responses: {
            "202": { description: "Queued; Location is the job's address", content: { [JSON_TYPE]: { schema: ref("Job") } } },
            ...authErrors,
            "400": problem("Not a job (the detail names the field), or a malformed Authorization header"),
            "404": problem("runs/ has no such run folder"),
            "405": dataErrors["405"],
            "413": problem("Larger than 4 KiB"),
            "415": problem("Not application/json"),
            "500": dataErrors["500"],
            "503": noBuilder,
          },
        },
      },
      "/jobs/{id}": {
        get: {
          summary: "A job: its state, and its outcome or error once finished; operators only",
          tags: ["operator"],
          security: [{ bearer: [] }],
          parameters: [jobId],
          responses: { "200": { description: "JSON", content: { [JSON_TYPE]: { schema: ref("Job") } } }, ...authErrors, "404": problem("No such job"), "405": dataErrors["405"], "500": dataErrors["500"], "503": noBuilder },
        },
      },
      "/jobs/{id}/cancel": {
        post: {
          summary: "Cancel a job: at once while queued, between run folders while running (nothing is published); operators only",
          tags: ["operator"],
          security: [{ bearer: [] }],
          parameters: [jobId],
          responses: {
            "200": { description: "Cancelled before it started", content: { [JSON_TYPE]: { schema: ref("Job") } } },
            "202": { description: "Running: asked to stop", content: { [JSON_TYPE]: { schema: ref("Job") } } },
            ...authErrors,
            "404": problem("No such job"),
            "405": dataErrors["405"],
            "409": { description: "The job has finished already", content: { [PROBLEM_CONTENT_TYPE]: { schema: ref("JobProblem") } } },
            "500": dataErrors["500"],
            "503": noBuilder,
          },
        },
      },
      "/healthz": get("Health of the product", "metadata", {
        "200": { description: "Serving a release (status ok or degraded)", content: { "text/plain;charset=UTF-8": { schema: { type: "string" } } } },
        "405": dataErrors["405"],
        ...authErrors,
        "503": { description: "No release can be served", content: { "text/plain;charset=UTF-8": { schema: { type: "string" } } } },
      }),
      "/doc/TermsOfService": get("Terms of service", "metadata", {
        "200": { description: "HTML", content: { "text/html;charset=UTF-8": { schema: { type: "string" } } } },
        "304": notModified,
        "405": dataErrors["405"],
        ...authErrors,
      }),
      "/viewer/": get("The map viewer: an HTML page reading this API (`/viewer` redirects here)", "metadata", {
        "200": { description: "HTML", content: { "text/html;charset=UTF-8": { schema: { type: "string" } } } },
        "304": notModified,
        "404": problem("No release has been published yet"),
        "405": dataErrors["405"],
        ...authErrors,
      }),
      "/viewer/{file}": get(
        "A file of the map viewer, named by its page (script, style sheet, coastlines; the names carry a content hash)",
        "metadata",
        {
          "200": {
            description: "The file",
            content: { "text/javascript;charset=UTF-8": { schema: { type: "string" } }, "text/css;charset=UTF-8": { schema: { type: "string" } }, [JSON_TYPE]: { schema: { type: "object" } }, "text/html;charset=UTF-8": { schema: { type: "string" } } },
          },
          "304": notModified,
          "404": problem("The viewer has no file of this name"),
          "405": dataErrors["405"],
          ...authErrors,
        },
        [{ name: "file", in: "path", required: true, schema: { type: "string" } }],
      ),
      "/openapi.json": get("This document", "metadata", {
        "200": { description: "OpenAPI 3.1", content: { [JSON_TYPE]: { schema: { type: "object" } } } },
        "304": notModified,
        "405": dataErrors["405"],
        ...authErrors,
      }),
    }),
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "A token from POST /token, in `Authorization: Bearer <token>`" } },
      schemas: {
        TokenResponse: {
          type: "object",
          properties: { access_token: { type: "string" }, token_type: { const: "Bearer" }, expires_in: { type: "integer" } },
          required: ["access_token", "token_type", "expires_in"],
        },
        OAuthError: {
          type: "object",
          properties: { error: { enum: ["invalid_request", "invalid_grant", "unsupported_grant_type"] }, error_description: { type: "string" } },
          required: ["error"],
        },
        AshModel: openModel(schemaOf(AshModel)),
        RefTimeModel: openModel(schemaOf(RefTimeModel)),
        Problem: openModel(schemaOf(Problem)),
        BuildReport: schemaOf(BuildReport),
        Datasets: schemaOf(DatasetsBody),
        InvalidUploadProblem: schemaOf(InvalidUploadProblem),
        RuntimeSettings: schemaOf(RuntimeSettings),
        Job: schemaOf(Job),
        PointAnswer: schemaOf(PointAnswer),
        RouteAnswer: schemaOf(RouteAnswer),
        RouteRequest: schemaOf(RouteRequest),
        JobProblem: { allOf: [ref("Problem"), { type: "object", properties: { job: ref("Job") }, required: ["job"] }] },
      },
    },
  };
}
