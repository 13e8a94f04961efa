// @ts-check
/**
 * The ashcast map viewer: a client of the published API only (`../.json`, `../reftimes`, the KML
 * resources), drawn with Leaflet over offline coastlines. Every request goes to the service itself:
 * no tiles, no fonts, no icons from elsewhere (the KML's icon hrefs are never followed).
 * Checked by `tsc -p templates/viewer` (DOM + Leaflet types); shipped as written, after Leaflet's script
 * and kml.js (which reads the KML).
 */
(() => {
  "use strict";

  /** @typedef {{ time: string, url?: string }} Timestep */
  /** @typedef {{ name: string, type: string, timesteps: Timestep[] }} Layer */
  /** @typedef {{ meta: { type: string, description: string, reftime: string, latlonbox?: { north: number, south: number, east: number, west: number }, report_url?: string }, layergroups: { name: string, layers: Layer[] }[] }} AshModel */
  /** @typedef {{ label: string, steps: { time: string, url: string }[] }} Choice  one entry of the band switch */

  const api = new URL("../", location.href);
  const PLAY_MS = 900;
  /** A flight-level band at the start of a layer name: `SFC/FL200 ash areas`, `FL200/350 ash areas`. */
  const BAND = /^((?:SFC|FL\d+)\/(?:FL)?\d+)\b/;

  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
  const banner = $("banner");
  const runSelect = /** @type {HTMLSelectElement} */ ($("run"));
  const bandList = $("band-list");
  const slider = /** @type {HTMLInputElement} */ ($("time"));
  const timeLabel = $("time-label");
  const play = /** @type {HTMLButtonElement} */ ($("play"));
  const status = $("status");

  // No worldCopyJump: a run across 180° is drawn east of it (longitudes past 180), and a jump to the
  // other copy of the world on the first drag would leave its ash behind. Land is copied instead.
  const map = L.map("map", { zoomSnap: 0.25, attributionControl: true });
  map.attributionControl.setPrefix("").addAttribution("Coastlines: Natural Earth");
  map.createPane("land").style.zIndex = "250";
  const landRenderer = L.canvas({ pane: "land" });
  const ashRenderer = L.canvas({ padding: 0.2 });
  map.setView([64, -18], 4);
  const ashLayer = L.layerGroup().addTo(map);
  const volcanoLayer = L.layerGroup().addTo(map);

  /** Current state. */
  const state = {
    /** @type {AshModel | undefined} */ model: undefined,
    /** @type {Choice[]} */ choices: [],
    choice: 0,
    step: 0,
    /** The time of the step shown. @type {string | undefined} */ time: undefined,
    /** The time the user chose: it survives band switches (a band with other steps shows the step nearest it). @type {string | undefined} */ wanted: undefined,
    playing: false,
    /** The next step of play, due once the one shown is drawn. @type {number | undefined} */ timer: undefined,
    /** Steps by url, for the run shown: fetched once, played from memory. @type {Map<string, Promise<Step>>} */
    steps: new Map(),
    /** The urls of steps already read: shown without a "Loading" note. @type {Set<string>} */
    ready: new Set(),
    drawn: 0,
    /** Counts run loads: only the newest one's answer is shown when the user switches quickly. */
    loads: 0,
    /** Whether a reftime was asked for (else the latest run is shown, and a reload shows the latest again). */
    pinned: false,
    /** The longitude the run's box is centred on (past 180 for a box across it): areas are drawn on its turn of the world. */
    /** @type {number | undefined} */ centreLon: undefined,
  };
  /** @type {() => void} */
  let firstDrawn = () => {};
  /** Settles once the first ash is drawn, or the first run load ends without any. */
  const firstDrawing = new Promise((resolve) => (firstDrawn = () => resolve(undefined)));

  /** Class id to its line colour, from the last step drawn with classes. @type {Map<string, string>} */
  const classColours = new Map();

  // Point and route queries (queries.js) ask for the run, band and time shown.
  const queries = ashQueries.attach(map, api, {
    reftime: () => state.model?.meta.reftime,
    band: () => state.choices[state.choice]?.label,
    time: () => state.time,
    // The class colours of the step drawn last (ashcast's KML names its classes): one palette for a run.
    classColour: (id) => classColours.get(id),
  });

  // For the browser tests and the first-paint bench: the map and the state, read-only by convention.
  Object.assign(window, {
    ashcastViewer: {
      map,
      state,
      /** The ash areas drawn now (each a fill and an outline). */
      areasDrawn: () => ashLayer.getLayers().length / 2,
      /** Where a longitude/latitude is drawn, in CSS pixels of the page. */
      pagePoint(/** @type {number} */ lon, /** @type {number} */ lat) {
        const point = map.latLngToContainerPoint([lat, lon]);
        const box = $("map").getBoundingClientRect();
        return { x: Math.round(box.left + point.x), y: Math.round(box.top + point.y) };
      },
    },
  });

  /**
   * Requests the page's inline script started before this script loaded, each used once.
   * @type {{ reftime: string | null, model?: Promise<Response>, reftimes?: Promise<Response> } | undefined}
   */
  const early = /** @type {any} */ (window).ashcastEarly;

  /** A failed request, with its status and the service's own reason (a problem's detail) when it gave one. */
  class RequestFailed extends Error {
    constructor(/** @type {number} */ status, /** @type {string} */ message) {
      super(message);
      this.status = status;
    }
  }

  const fetchOk = async (/** @type {string | URL} */ url, /** @type {Promise<Response> | undefined} */ started = undefined) => {
    const response = await (started ?? fetch(url, { headers: { accept: "application/json" } }));
    if (!response.ok) {
      /** @type {string | undefined} */
      let detail;
      if (/^application\/problem\+json/.test(response.headers.get("content-type") ?? "")) detail = await response.json().then((body) => (typeof body?.detail === "string" ? body.detail : undefined), () => undefined);
      throw new RequestFailed(response.status, detail ?? `${response.status} ${response.statusText} for ${new URL(url, location.href).pathname}`);
    }
    return response;
  };

  const formatTime = (/** @type {string} */ iso) => iso.replace("T", " ").replace(/:00Z$/, " UTC");
  const hoursAfter = (/** @type {string} */ iso, /** @type {string} */ reftime) => Math.round((Date.parse(iso) - Date.parse(reftime)) / 3_600_000);

  function loadStep(/** @type {string} */ url) {
    let step = state.steps.get(url);
    if (!step) {
      step = fetchOk(url).then(async (response) => ashKml.parse(await response.text()));
      const steps = state.steps;
      const ready = state.ready;
      step.then(() => ready.add(url), () => steps.delete(url));
      state.steps.set(url, step);
    }
    return step;
  }

  // ---------------------------------------------------------------------------------------------
  // Drawing

  /** A polygon's rings on the turn of the world its outer ring's first position is nearest the run's box on. */
  function onRunTurn(/** @type {L.LatLngTuple[][]} */ rings) {
    const first = rings[0]?.[0];
    if (!first) return rings;
    const shift = ashKml.nearTurn(first[1], state.centreLon) - first[1];
    return rings.map((ring) => {
      const ringShift = ashKml.nearTurn(ring[0]?.[1] ?? first[1], first[1] + shift) - (ring[0]?.[1] ?? first[1]);
      return ringShift ? ring.map(([lat, lon]) => /** @type {L.LatLngTuple} */ ([lat, lon + ringShift])) : ring;
    });
  }

  /** Whether a longitude is the antimeridian, on any turn of the world. */
  const onAntimeridian = (/** @type {number} */ lon) => Math.abs(ashKml.nearTurn(lon, 180) - 180) < 1e-9;

  /**
   * A ring's outline without its edges along 180°: an area across the antimeridian comes in parts cut there
   * (as KML 2.2 and GeoJSON need), and the cut is not an edge of the ash.
   */
  function outlineOf(/** @type {L.LatLngTuple[]} */ ring) {
    /** @type {L.LatLngTuple[][]} */
    const lines = [];
    /** @type {L.LatLngTuple[]} */
    let line = [];
    ring.forEach((position, i) => {
      const previous = ring[i - 1];
      if (previous && onAntimeridian(previous[1]) && onAntimeridian(position[1])) {
        if (line.length > 1) lines.push(line);
        line = [];
      }
      line.push(position);
    });
    if (line.length > 1) lines.push(line);
    return lines;
  }

  function drawStep(/** @type {Step} */ step) {
    for (const entry of step.legend) if (entry.classId) classColours.set(entry.classId, entry.line);
    ashLayer.clearLayers();
    for (const area of step.areas) {
      const latlngs = area.latlngs.map((polygon) => onRunTurn(/** @type {L.LatLngTuple[][]} */ (polygon)));
      L.polygon(latlngs, { renderer: ashRenderer, stroke: false, fillColor: area.fill, fillOpacity: 1, interactive: false }).addTo(ashLayer);
      const outline = latlngs.flatMap((polygon) => polygon.flatMap(outlineOf));
      L.polyline(outline, { renderer: ashRenderer, color: area.line, weight: 1.5, interactive: false }).addTo(ashLayer);
    }
    volcanoLayer.clearLayers();
    if (step.volcano) {
      // Its size and anchor come from the style sheet (larger on a phone): iconSize given as undefined overrides
      // DivIcon's default of 12 × 12, and without it Leaflet sets neither size nor margins.
      const icon = L.divIcon({ className: "volcano-marker", html: "▲", iconSize: undefined });
      L.marker([step.volcano.lat, ashKml.nearTurn(step.volcano.lon, state.centreLon)], { icon, title: step.volcano.name, alt: `Volcano ${step.volcano.name}`, keyboard: false }).addTo(volcanoLayer);
    }
    const list = $("legend-list");
    list.replaceChildren(
      ...step.legend.map((entry) => {
        const item = document.createElement("li");
        const swatch = document.createElement("span");
        swatch.className = "swatch";
        swatch.style.background = entry.fill;
        swatch.style.borderColor = entry.line;
        item.append(swatch, entry.label);
        return item;
      }),
    );
    // What the field is, as the model output says it ("Maximum of 6-hour mean ash concentration"), or the bare word.
    const quantity = step.quantity ? `${step.quantity.charAt(0).toUpperCase()}${step.quantity.slice(1)}` : "Ash concentration";
    $("legend-title").textContent = step.concentrations ? quantity : "Areas";
    const noArea = step.areas.length ? "" : step.concentrations ? (step.missing ? "No ash above the lowest threshold where the model has values." : "No ash above the lowest threshold at this time.") : "No area drawn for this time.";
    $("ash-note").textContent = step.missing ? `${noArea ? `${noArea} ` : ""}${step.missing}: no ash area is drawn there.` : noArea;
  }

  /**
   * A note over the map while it does not show what the controls say: a step or run still loading (the map
   * greyed, what it shows the last one), or one that could not be loaded (the ash taken off). Empty: none.
   */
  function setMapNote(/** @type {string} */ text, /** @type {"loading" | "failed"} */ kind = "loading") {
    const note = $("map-note");
    note.textContent = text;
    note.hidden = !text;
    $("map").dataset.stale = text ? kind : "";
  }

  /** No ash, no volcano, no legend and no note: what the map shows when there is nothing it may show. */
  function clearMap() {
    drawStep({ areas: [], legend: [], concentrations: false });
    $("ash-note").textContent = "";
  }

  /** Shows the current band at the current step; the newest request wins when several are in flight. */
  async function show() {
    const choice = state.choices[state.choice];
    const step = choice?.steps[state.step];
    const model = state.model;
    if (!choice || !step || !model) return;
    clearTimeout(state.timer);
    state.timer = undefined;
    slider.value = String(state.step);
    slider.setAttribute("aria-valuetext", `${formatTime(step.time)}, ${state.step + 1} of ${choice.steps.length}`);
    timeLabel.textContent = `${formatTime(step.time)} (T+${hoursAfter(step.time, model.meta.reftime)} h) · ${state.step + 1}/${choice.steps.length}`;
    remember(step.time);
    const ticket = ++state.drawn;
    // Until the step is drawn the map still shows the last one: greyed and said, unless it is already read (then
    // it is drawn before the next frame).
    if (!state.ready.has(step.url)) setMapNote(`Loading ${choice.label} at ${formatTime(step.time)}…`);
    try {
      const loaded = await loadStep(step.url);
      if (ticket !== state.drawn) return;
      drawStep(loaded);
      setMapNote("");
      state.time = step.time;
      queries.refresh();
      const drawn = `${model.meta.reftime}|${choice.label}|${step.time}`;
      // Leaflet draws its canvas in the next animation frame; this callback runs after it, before the paint.
      requestAnimationFrame(() => {
        if (ticket !== state.drawn) return;
        document.body.dataset.drawn = drawn;
        if (!performance.getEntriesByName("ash-drawn").length) performance.mark("ash-drawn");
        firstDrawn();
      });
      // While playing, the next step is fetched ahead, and shown once this one has been on screen a while.
      if (state.playing) {
        const next = choice.steps[(state.step + 1) % choice.steps.length];
        if (next) void loadStep(next.url).catch(() => {});
        state.timer = setTimeout(() => go(1), PLAY_MS);
      }
    } catch (error) {
      if (ticket !== state.drawn) return;
      stop();
      // Never the last step's ash under this step's time: the map is emptied, greyed and says why.
      clearMap();
      state.time = undefined;
      queries.refresh();
      const why = /** @type {Error} */ (error).message;
      setMapNote(`${choice.label} at ${formatTime(step.time)} could not be loaded: ${why}. Nothing is drawn; this is not clear air.`, "failed");
      document.body.dataset.drawn = `${model.meta.reftime}|${choice.label}|${step.time}|failed`;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Runs, bands, time

  /** The band switch: the run's KML layers served here, flight-level bands first. */
  function choicesOf(/** @type {AshModel} */ model) {
    /** @type {(Choice & { band: boolean })[]} */
    const choices = [];
    for (const group of model.layergroups) {
      for (const layer of group.layers) {
        if (layer.type !== "KML") continue;
        // Only urls of this service: a layer pointing elsewhere is left out (no request leaves the service).
        const steps = layer.timesteps.flatMap((t) => {
          if (!t.url) return [];
          const url = new URL(t.url, api);
          return url.origin === location.origin ? [{ time: t.time, url: url.href }] : [];
        });
        if (!steps.length) continue;
        const band = BAND.exec(layer.name)?.[1];
        const kml = group.layers.filter((l) => l.type === "KML").length;
        choices.push({ label: band ?? (kml === 1 ? group.name : `${group.name}: ${layer.name}`), steps, band: band !== undefined });
      }
    }
    return [...choices.filter((c) => c.band), ...choices.filter((c) => !c.band)];
  }

  function setBanner(/** @type {AshModel["meta"]} */ meta) {
    const kind = meta.type === "Real Eruption" ? "real" : meta.type === "Rehearsal" ? "rehearsal" : "exercise";
    banner.className = `banner banner-${kind}`;
    const note = kind === "real" ? "not an exercise" : "not a real eruption: for training only";
    banner.innerHTML = "";
    const strong = document.createElement("span");
    strong.className = "kind";
    strong.textContent = meta.type;
    const when = document.createElement("span");
    when.className = "when";
    when.textContent = ` · run ${formatTime(meta.reftime)}`;
    banner.append(strong, " ", note, when);
    banner.dataset.type = meta.type;
    $("watermark").textContent = kind === "real" ? "" : meta.type;
  }

  function stepNear(/** @type {Choice} */ choice, /** @type {string | undefined} */ time) {
    if (!time) return 0;
    let index = 0;
    choice.steps.forEach((s, i) => {
      if (s.time <= time) index = i;
    });
    return index;
  }

  function selectChoice(/** @type {number} */ index) {
    const choice = state.choices[index];
    if (!choice) return;
    state.choice = index;
    state.step = stepNear(choice, state.wanted);
    slider.max = String(choice.steps.length - 1);
    const radio = /** @type {HTMLInputElement | null} */ (bandList.querySelector(`input[value="${index}"]`));
    if (radio) radio.checked = true;
    void show();
  }

  /**
   * Shows a run (the latest when `reftime` is undefined). While it loads, and when it cannot be loaded, the run
   * shown before stays under its own banner and name (the map marked while loading): resolves false when this
   * load was overtaken by a newer one, throws (RequestFailed) when it failed.
   */
  async function loadRun(/** @type {string | undefined} */ reftime, /** @type {{ band?: string | null, time?: string | null }} */ wanted = {}) {
    stop();
    const ticket = ++state.loads;
    // The note over the map before this load: put back if the run cannot be loaded (a step still loading, or failed).
    const note = $("map-note");
    const noteBefore = { text: note.hidden ? "" : note.textContent ?? "", kind: /** @type {"loading" | "failed"} */ ($("map").dataset.stale === "failed" ? "failed" : "loading") };
    const loadingRun = `Loading the run ${reftime ? formatTime(reftime) : "published last"}…`;
    if (state.model) setMapNote(loadingRun);
    else {
      banner.className = "banner";
      banner.textContent = "Loading the run…";
    }
    const started = early?.model && early.reftime === (reftime ?? null) ? early.model : undefined;
    if (early) early.model = undefined;
    /** @type {Response} */
    let response;
    /** @type {AshModel | undefined} */
    let model;
    try {
      response = await fetchOk(new URL(reftime ? `.json?reftime=${encodeURIComponent(reftime)}` : ".json", api), started);
      if (response.status !== 204) model = /** @type {AshModel} */ (await response.json());
    } catch (error) {
      if (ticket !== state.loads) return false;
      if (state.model && note.textContent === loadingRun) setMapNote(noteBefore.text, noteBefore.kind);
      throw error;
    }
    if (ticket !== state.loads) return false;
    if (!model) {
      // Nothing published (any more): nothing of a run shown before may stay, on the map or beside it.
      state.model = undefined;
      state.pinned = false;
      state.choices = [];
      state.time = undefined;
      state.drawn++;
      clearMap();
      bandList.replaceChildren();
      timeLabel.textContent = "–";
      slider.max = "0";
      $("description").textContent = "";
      queries.clear();
      history.replaceState(null, "", location.pathname);
      setMapNote("");
      banner.className = "banner";
      banner.textContent = "No forecast run is published yet: this page shows the latest one once there is one.";
      document.body.dataset.drawn = "nothing published";
      return true;
    }
    setMapNote("");
    state.model = model;
    state.pinned = reftime !== undefined;
    state.steps = new Map();
    state.ready = new Set();
    state.choices = choicesOf(model);
    setBanner(model.meta);
    $("description").textContent = model.meta.description;
    const report = /** @type {HTMLAnchorElement} */ ($("report"));
    // Only a web address becomes a link (the build accepts only http(s) report urls; this page does not rely on it).
    const reportUrl = /^https?:\/\//i.test(model.meta.report_url ?? "") ? model.meta.report_url : undefined;
    report.hidden = !reportUrl;
    if (reportUrl) report.href = reportUrl;
    /** @type {HTMLAnchorElement} */ ($("json-link")).href = new URL(`.json?reftime=${model.meta.reftime}`, api).href;
    if (runSelect.value !== model.meta.reftime) runSelect.value = model.meta.reftime;

    bandList.replaceChildren(
      ...state.choices.map((choice, i) => {
        const label = document.createElement("label");
        const input = document.createElement("input");
        Object.assign(input, { type: "radio", name: "band", value: String(i) });
        input.addEventListener("change", () => selectChoice(i));
        label.append(input, choice.label);
        return label;
      }),
    );
    if (!state.choices.length) {
      // Nothing of the previous run may stay on the map under this run's banner.
      state.drawn++;
      clearMap();
      timeLabel.textContent = "–";
      slider.max = "0";
      status.textContent = "This run has no ash areas to draw here (its layers are on other servers).";
      document.body.dataset.drawn = `${model.meta.reftime}|none`;
    }
    const box = model.meta.latlonbox;
    const east = box && (box.east < box.west ? box.east + 360 : box.east);
    state.centreLon = box && east !== undefined ? (box.west + east) / 2 : undefined;
    // Not animated: what is drawn (and the pixel a test or a screenshot looks at) is the final view at once.
    if (box && east !== undefined) map.fitBounds([[box.south, box.west], [box.north, east]], { padding: [12, 12], animate: false });
    state.time = undefined;
    state.wanted = wanted.time ?? undefined;
    // A place or a route asked about before is asked again of this run.
    queries.runChanged();
    const band = state.choices.findIndex((c) => c.label === wanted.band);
    selectChoice(band >= 0 ? band : 0);
    return true;
  }

  /** The run, band and time in the address, so a view can be shared and reloaded. */
  function remember(/** @type {string} */ time) {
    const params = new URLSearchParams();
    if (state.model && state.pinned) params.set("reftime", state.model.meta.reftime);
    const choice = state.choices[state.choice];
    if (choice && state.choice > 0) params.set("band", choice.label);
    if (state.step > 0) params.set("time", time);
    const query = params.toString();
    history.replaceState(null, "", query ? `?${query}` : location.pathname);
  }

  /** Moves to a step chosen by the user: its time is the one other bands are shown at. */
  function goTo(/** @type {number} */ step) {
    const choice = state.choices[state.choice];
    if (!choice) return;
    state.step = (step + choice.steps.length) % choice.steps.length;
    state.wanted = choice.steps[state.step]?.time;
    void show();
  }
  const go = (/** @type {number} */ delta) => goTo(state.step + delta);

  function stop() {
    state.playing = false;
    clearTimeout(state.timer);
    state.timer = undefined;
    play.setAttribute("aria-pressed", "false");
    play.textContent = "▶ Play";
  }

  play.addEventListener("click", () => {
    if (state.playing) return stop();
    // Each step is drawn, then shown PLAY_MS, before the next: on a slow network play waits for the map.
    state.playing = true;
    play.setAttribute("aria-pressed", "true");
    play.textContent = "❚❚ Pause";
    go(1);
  });
  $("prev").addEventListener("click", () => go(-1));
  $("next").addEventListener("click", () => go(1));
  slider.addEventListener("input", () => goTo(Number(slider.value)));
  runSelect.addEventListener("change", () => {
    // The first entry is "the latest": chosen, it follows new runs on reload.
    const reftime = runSelect.selectedIndex === 0 ? undefined : runSelect.value;
    loadRun(reftime, { band: state.choices[state.choice]?.label }).catch((error) => runFailed(error, reftime ?? runSelect.value));
  });
  // The keyboard's way to a place's values: Enter or Space on the map asks for its centre (arrows pan it there).
  $("map").addEventListener("keydown", (event) => {
    if (event.target !== $("map") || (event.key !== "Enter" && event.key !== " ")) return;
    event.preventDefault();
    const centre = map.getCenter();
    void queries.pointAt(centre.lat, ((((centre.lng + 180) % 360) + 360) % 360) - 180, centre.lng);
  });

  /** A run chosen that could not be loaded: the run shown stays, under its own banner and name, and the reason is said. */
  function runFailed(/** @type {Error} */ error, /** @type {string} */ reftime) {
    if (!state.model) return fail(error);
    setBanner(state.model.meta);
    runSelect.value = state.model.meta.reftime;
    status.textContent = `The run ${formatTime(reftime)} could not be loaded: ${error.message}. Still showing the run ${formatTime(state.model.meta.reftime)}.`;
  }

  function fail(/** @type {Error} */ error) {
    banner.className = "banner banner-error";
    banner.textContent = "The forecast could not be loaded";
    status.textContent = error.message;
  }

  async function loadCoastlines() {
    const file = document.body.dataset.coastlines ?? "";
    const land = await (await fetchOk(file)).json();
    // The ash is what the page is for: the coastlines (100,000 points to project) wait for its first
    // drawing, or for a second and a half if it is slow to come, rather than holding the main thread before it.
    await Promise.race([firstDrawing, new Promise((resolve) => setTimeout(resolve, 1500))]);
    // The options reach each polygon, renderer included (the GeoJSON options type does not say so).
    const options = /** @type {L.GeoJSONOptions} */ ({ pane: "land", renderer: landRenderer, interactive: false, style: { color: "#6f7f72", weight: 0.8, fillColor: "#f1efe4", fillOpacity: 1 } });
    L.geoJSON(land, options).addTo(map);
    requestAnimationFrame(() => performance.mark("coastlines-drawn"));
    // The land one turn east or west too, once the view reaches past 180° (a run across it, or a pan):
    // made only then, since each copy is as many points to project again.
    /** @type {Set<number>} */
    const copied = new Set();
    const copyWhereSeen = () => {
      const bounds = map.getBounds();
      for (const turn of [bounds.getEast() > 180 ? 360 : 0, bounds.getWest() < -180 ? -360 : 0]) {
        if (!turn || copied.has(turn)) continue;
        copied.add(turn);
        L.geoJSON(land, { ...options, coordsToLatLng: (/** @type {number[]} */ c) => L.latLng(/** @type {number} */ (c[1]), /** @type {number} */ (c[0]) + turn) }).addTo(map);
      }
    };
    map.on("moveend", copyWhereSeen);
    copyWhereSeen();
  }

  async function start() {
    const params = new URLSearchParams(location.search);
    const runs = fetchOk(new URL("reftimes", api), early?.reftimes)
      .then(async (response) => {
        const body = /** @type {{ reftimes: string[] }[]} */ (response.status === 204 ? [{ reftimes: [] }] : await response.json());
        return body[0]?.reftimes ?? [];
      })
      .catch((/** @type {Error} */ error) => {
        // The run shown stays usable; only choosing another is not.
        status.textContent = `The list of runs could not be loaded: ${error.message}`;
        return /** @type {string[]} */ ([]);
      });
    const asked = params.get("reftime") ?? undefined;
    const wanted = { band: params.get("band"), time: params.get("time") };
    // A run in the address that is not published (withdrawn, mistyped): said, and the latest shown instead.
    const first = loadRun(asked, wanted).catch(async (/** @type {Error} */ error) => {
      if (!asked || !(error instanceof RequestFailed) || error.status !== 404) throw error;
      await loadRun(undefined, { band: wanted.band });
      status.textContent = `The run ${asked} is not published (${error.message}): showing the latest run.`;
    });
    loadCoastlines().catch((error) => (status.textContent = `Coastlines could not be loaded: ${error.message}`));
    const reftimes = await runs;
    runSelect.replaceChildren(
      ...reftimes.map((reftime, i) => {
        const option = document.createElement("option");
        option.value = reftime;
        option.textContent = `${formatTime(reftime)}${i === 0 ? " (latest)" : ""}`;
        return option;
      }),
    );
    await first.finally(() => {
      // A run with nothing to draw, or none at all: the coastlines need not wait any longer.
      if (!state.choices.length) firstDrawn();
    });
    if (state.model) runSelect.value = state.model.meta.reftime;
  }

  start().catch(fail);
})();
