// @ts-check
/**
 * Point and route queries in the viewer: a click on the map shows the value series at that place for the
 * band shown (`../point`), and a GeoJSON route file chosen by the user is sent to `../route` and drawn
 * with its encounters. Shipped after kml.js and before viewer.js in the same script file; viewer.js
 * attaches it to the map and tells it the run, band and time shown.
 */

/** @typedef {{ time: string, value: number | null, class: string }} PointStep */
/** @typedef {{ model: string, label: string, band: string, steps: PointStep[] }} PointSeries */
/** @typedef {{ lon: number, lat: number, fl: number, km: number, time?: string }} RoutePoint */
/** @typedef {{ band: string, class: string, highest: number, entry: RoutePoint, exit: RoutePoint }} Encounter */
/** @typedef {{ from: RoutePoint, to: RoutePoint }} Stretch */
/** @typedef {{ model: string, bands: { band: string, label: string }[], encounters?: Encounter[], steps?: { time: string, value: number | null, class: string, band: string | null, missing_share?: number }[], outside_domain: Stretch[], outside_forecast: Stretch[], above_bands: Stretch[], missing_values?: Stretch[] }} ModelRoute */
/** @typedef {{ lat: number, lon: number, km: number }} PathPoint  a point of the route as drawn, its longitude continuous, its distance along the route */
/** @typedef {{ reftime: () => string | undefined, band: () => string | undefined, time: () => string | undefined, classColour: (id: string) => string | undefined }} Shown */

const ashQueries = (() => {
  "use strict";

  // With the year, as the rest of the page writes it: "05-02" reads as 5 February to many.
  const formatTime = (/** @type {string} */ iso) => iso.slice(0, 16).replace("T", " ") + " UTC";
  const mg = (/** @type {number | null} */ value) => (value === null ? "no value" : `${value < 0.01 ? value.toFixed(3) : value.toPrecision(3)} mg/m³`);

  /** Reads a problem answer's detail, else the status. */
  async function why(/** @type {Response} */ response) {
    try {
      const body = await response.json();
      return typeof body.detail === "string" ? body.detail : `${response.status} ${response.statusText}`;
    } catch {
      return `${response.status} ${response.statusText}`;
    }
  }

  const RADIUS_KM = 6371.0088;
  const RAD = Math.PI / 180;
  /** Drawn points at most this far apart along a great circle (and at most 256 per segment of the route). */
  const DRAWN_STEP_KM = 20;

  /**
   * The route as the service follows it, great circles between its positions (not straight lines on the
   * map): points with continuous longitudes (a flight across 180° goes on to 181) and their distance along it.
   */
  function followed(/** @type {number[][]} */ coordinates) {
    /** @type {PathPoint[]} */
    const points = [];
    let km = 0;
    for (let i = 0; i < coordinates.length; i++) {
      const [lon = 0, lat = 0] = /** @type {number[]} */ (coordinates[i]);
      const previous = points[points.length - 1];
      if (!previous) {
        points.push({ lat, lon, km: 0 });
        continue;
      }
      const [pLon = 0, pLat = 0] = /** @type {number[]} */ (coordinates[i - 1]);
      const [ax, ay, az] = [Math.cos(pLat * RAD) * Math.cos(pLon * RAD), Math.cos(pLat * RAD) * Math.sin(pLon * RAD), Math.sin(pLat * RAD)];
      const [bx, by, bz] = [Math.cos(lat * RAD) * Math.cos(lon * RAD), Math.cos(lat * RAD) * Math.sin(lon * RAD), Math.sin(lat * RAD)];
      const angle = Math.atan2(Math.hypot(ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx), ax * bx + ay * by + az * bz);
      const parts = Math.min(256, Math.max(1, Math.ceil((angle * RADIUS_KM) / DRAWN_STEP_KM)));
      for (let k = 1; k <= parts; k++) {
        const f = k / parts;
        // Spherical interpolation: the point a share f of the way along the great circle.
        const [wa, wb] = angle > 0 ? [Math.sin((1 - f) * angle) / Math.sin(angle), Math.sin(f * angle) / Math.sin(angle)] : [1 - f, f];
        const [x, y, z] = [wa * ax + wb * bx, wa * ay + wb * by, wa * az + wb * bz];
        const pointLon = k === parts ? lon : Math.atan2(y, x) / RAD;
        const pointLat = k === parts ? lat : Math.atan2(z, Math.hypot(x, y)) / RAD;
        const last = /** @type {PathPoint} */ (points[points.length - 1]);
        points.push({ lat: pointLat, lon: ashKml.nearTurn(pointLon, last.lon), km: km + f * angle * RADIUS_KM });
      }
      km += angle * RADIUS_KM;
    }
    return points;
  }

  /** The part of the drawn route between two of the service's points (entry and exit, or a stretch's ends), along it. */
  function along(/** @type {PathPoint[]} */ path, /** @type {{ lat: number, lon: number, km: number }} */ from, /** @type {{ lat: number, lon: number, km: number }} */ to) {
    const near = (/** @type {{ lon: number, km: number }} */ p) => {
      const next = path.find((q) => q.km >= p.km) ?? path[path.length - 1];
      return ashKml.nearTurn(p.lon, next?.lon);
    };
    /** @type {L.LatLngTuple[]} */
    const line = [[from.lat, near(from)]];
    for (const p of path) if (p.km > from.km && p.km < to.km) line.push([p.lat, p.lon]);
    line.push([to.lat, near(to)]);
    return line;
  }

  /** A band as the map's controls name it (`SFC/FL200`, `FL200/350`), from the service's id (`FL000-200`). */
  const bandLabel = (/** @type {string} */ id) => id.replace(/^FL(\d+)-(\d+)$/, (_, lower, upper) => (Number(lower) === 0 ? `SFC/FL${upper}` : `FL${lower}/${upper}`));

  function item(/** @type {string} */ text, /** @type {string} */ className = "") {
    const li = document.createElement("li");
    li.textContent = text;
    if (className) li.className = className;
    return li;
  }

  /**
   * @param {L.Map} map
   * @param {URL} api the product's base url (ending in /)
   * @param {Shown} shown what the viewer shows now
   */
  function attach(map, api, shown) {
    const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
    const placeLayer = L.layerGroup().addTo(map);
    const routeLayer = L.layerGroup().addTo(map);
    /** The place asked about last (its values once answered), asked again when the run changes. @type {{ lat: number, lon: number, drawnLon: number, reftime: string, series?: PointSeries[] } | undefined} */
    let place;
    let pointTicket = 0;
    /** The route file sent last, sent again when the run changes. @type {{ name: string, text: string } | undefined} */
    let lastRoute;

    /** The series of the band shown, as a list with the shown step marked (and scrolled to, in the list alone). */
    function renderPlace() {
      const list = $("point-list");
      const title = $("point-title");
      if (!place?.series) return;
      const band = shown.band();
      const series = place.series.filter((s) => s.label === band);
      title.textContent = `At ${place.lat.toFixed(2)}, ${place.lon.toFixed(2)}${band ? ` · ${band}` : ""} · run ${formatTime(place.reftime)}`;
      if (!series.length) {
        list.replaceChildren(item(`No model values for ${band ?? "this band"} here (forecasters' drawings have none).`));
        return;
      }
      const time = shown.time();
      list.replaceChildren(
        ...series.flatMap((s) =>
          s.steps.map((step) => {
            const li = item(`${formatTime(step.time)}${series.length > 1 ? ` ${s.model}` : ""}: ${mg(step.value)} (${step.class})`, `class-${step.class}`);
            li.dataset.time = step.time;
            if (step.time === time) li.setAttribute("aria-current", "true");
            return li;
          }),
        ),
      );
      // Never the page: scrollIntoView moved it too, taking the map away on a phone at every step of Play.
      const current = list.querySelector('[aria-current="true"]');
      if (current && list.scrollHeight > list.clientHeight) {
        const within = current.getBoundingClientRect().top - list.getBoundingClientRect().top + list.scrollTop;
        list.scrollTop = within - (list.clientHeight - current.getBoundingClientRect().height) / 2;
      }
      document.body.dataset.point = `${place.reftime}|${place.lat}|${place.lon}|${band}`;
    }

    /** The values at a place (`lon` within ±180), marked where it was clicked (`drawnLon`: past 180 on a run across it). */
    async function pointAt(/** @type {number} */ lat, /** @type {number} */ lon, drawnLon = lon) {
      const reftime = shown.reftime();
      if (!reftime) return;
      const ticket = ++pointTicket;
      // Nothing of another place or run stays listed while this one is asked.
      place = { lat, lon, drawnLon, reftime };
      placeLayer.clearLayers();
      L.circleMarker([lat, drawnLon], { radius: 6, color: "#0a58ca", weight: 2, fillOpacity: 0.3, interactive: false }).addTo(placeLayer);
      $("point").hidden = false;
      $("point-title").textContent = `At ${lat.toFixed(2)}, ${lon.toFixed(2)} · run ${formatTime(reftime)}`;
      $("point-list").replaceChildren(item("Loading…"));
      const url = new URL(`point?lat=${lat.toFixed(5)}&lon=${lon.toFixed(5)}&reftime=${encodeURIComponent(reftime)}`, api);
      const response = await fetch(url, { headers: { accept: "application/json" } });
      if (ticket !== pointTicket) return;
      if (!response.ok) {
        $("point-list").replaceChildren(item(await why(response)));
        document.body.dataset.point = `${reftime}|${lat}|${lon}|refused`;
        return;
      }
      const body = /** @type {{ series: PointSeries[] }} */ (await response.json());
      if (ticket !== pointTicket) return;
      place.series = body.series;
      renderPlace();
    }

    map.on("click", (event) => {
      const { lat, lng } = event.latlng;
      // Leaflet's longitudes run on past ±180 as the map is panned round the world.
      const lon = ((((lng + 180) % 360) + 360) % 360) - 180;
      void pointAt(lat, lon, lng);
    });

    let routeTicket = 0;

    /** Sends a route file to the service for the run shown, then lists and draws what the flight meets. */
    async function route(/** @type {{ name: string, text: string }} */ file, fit = true) {
      const reftime = shown.reftime();
      const list = $("route-list");
      const ticket = ++routeTicket;
      lastRoute = file;
      routeLayer.clearLayers();
      list.replaceChildren(item(`Sending the route${reftime ? ` for the run ${formatTime(reftime)}` : ""}…`));
      delete document.body.dataset.route;
      /** @type {any} */
      let geojson;
      try {
        geojson = JSON.parse(file.text);
      } catch {
        list.replaceChildren(item(`${file.name} is not JSON: choose a GeoJSON file with one LineString Feature.`));
        return;
      }
      const url = new URL(`route${reftime ? `?reftime=${encodeURIComponent(reftime)}` : ""}`, api);
      const response = await fetch(url, { method: "POST", headers: { "content-type": "application/geo+json", accept: "application/json" }, body: file.text });
      if (ticket !== routeTicket) return;
      if (!response.ok) {
        list.replaceChildren(item(await why(response)));
        document.body.dataset.route = "refused";
        return;
      }
      const answer = /** @type {{ reftime: string, length_km: number, models: ModelRoute[] }} */ (await response.json());
      if (ticket !== routeTicket) return;
      // Drawn as the service follows it: great circles, the encounters and stretches along the same line.
      const path = followed(/** @type {number[][]} */ (geojson?.geometry?.coordinates ?? []));
      const stretch = (/** @type {Stretch} */ s) => along(path, s.from, s.to);
      L.polyline(path.map((p) => /** @type {L.LatLngTuple} */ ([p.lat, p.lon])), { color: "#0a58ca", weight: 2, interactive: false }).addTo(routeLayer);
      /** @type {HTMLLIElement[]} */
      const items = [item(`Run ${formatTime(answer.reftime)}:`)];
      let encounters = 0;
      for (const model of answer.models) {
        const label = (/** @type {string | null} */ band) => model.bands.find((b) => b.band === band)?.label ?? (band ? bandLabel(band) : "");
        for (const e of model.encounters ?? []) {
          encounters++;
          // In the legend's colour of its class, as the map draws that class.
          L.polyline(along(path, e.entry, e.exit), { color: shown.classColour(e.class) ?? "#b00020", weight: 6, interactive: false }).addTo(routeLayer);
          items.push(item(`${label(e.band)} ${e.class} up to ${mg(e.highest)}: ${e.entry.time ? formatTime(e.entry.time) : ""} at ${e.entry.km.toFixed(0)} km to ${e.exit.time ? formatTime(e.exit.time) : ""} at ${e.exit.km.toFixed(0)} km (FL${Math.round(e.entry.fl)})`, `class-${e.class}`));
        }
        let unknown = 0;
        let partly = 0;
        for (const s of model.steps ?? []) {
          if (s.value === null) unknown++;
          else if (s.class !== "none") items.push(item(`${formatTime(s.time)}: up to ${mg(s.value)} (${s.class}) in ${label(s.band)}`, `class-${s.class}`));
          if (s.missing_share !== undefined) partly++;
        }
        if (unknown) items.push(item(`${model.model}: nothing is known along the route at ${unknown} of ${model.steps?.length} steps.`));
        if (partly) items.push(item(`${model.model}: the model has no value along part of the route at ${partly} of ${model.steps?.length} steps (nothing known there).`));
        // Where nothing is known (no model value, outside the domain or the forecast): drawn grey and said, never
        // left to read as clear.
        for (const gap of [...(model.missing_values ?? []), ...model.outside_domain, ...model.outside_forecast]) {
          L.polyline(stretch(gap), { color: "#6c757d", weight: 6, dashArray: "6 6", interactive: false }).addTo(routeLayer);
        }
        if (model.missing_values?.length) items.push(item(`${model.model}: the model has no value along part of the route (nothing known there).`));
        if (model.outside_domain.length) items.push(item(`${model.model}: part of the route is outside the model's domain (nothing known there).`));
        const beyond = model.outside_forecast.reduce((sum, s) => sum + (s.to.km - s.from.km), 0);
        if (model.outside_forecast.length) items.push(item(`${model.model}: ${beyond >= answer.length_km - 0.5 ? "the whole flight is" : "part of the flight is"} outside the forecast's times (nothing known there).`));
        if (model.above_bands.length) items.push(item(`${model.model}: part of the route is above FL550, the highest band.`));
      }
      const timed = answer.models.some((m) => m.encounters !== undefined);
      if (items.length === 1) items.push(item(timed ? "No ash at or above the lowest threshold along the route." : "The route is clear at every step."));
      list.replaceChildren(...items);
      document.body.dataset.route = `${answer.reftime}|${encounters}`;
      if (fit && path.length) map.fitBounds(L.polyline(path.map((p) => /** @type {L.LatLngTuple} */ ([p.lat, p.lon]))).getBounds(), { padding: [24, 24], animate: false });
    }

    const failed = (/** @type {Error} */ error) => $("route-list").replaceChildren(item(`The route could not be sent: ${error.message}`));
    const input = /** @type {HTMLInputElement} */ ($("route-file"));
    input.addEventListener("change", async () => {
      const file = input.files?.[0];
      if (file) route({ name: file.name, text: await file.text() }).catch(failed);
    });

    /** Another run is shown: the place and the route asked about are asked of it, nothing of the last run stays listed. */
    function runChanged() {
      if (place) void pointAt(place.lat, place.lon, place.drawnLon);
      if (lastRoute) route(lastRoute, false).catch(failed);
    }

    /** No run is shown any more: the place and route asked about, and their answers, are taken away. */
    function clear() {
      pointTicket++;
      routeTicket++;
      place = undefined;
      lastRoute = undefined;
      placeLayer.clearLayers();
      routeLayer.clearLayers();
      $("point").hidden = true;
      $("point-list").replaceChildren();
      $("route-list").replaceChildren();
      delete document.body.dataset.point;
      delete document.body.dataset.route;
    }

    return { pointAt, refresh: renderPlace, runChanged, clear };
  }

  return { attach };
})();
