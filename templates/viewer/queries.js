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
/** @typedef {{ model: string, encounters?: Encounter[], steps?: { time: string, value: number | null, class: string, band: string | null, missing_share?: number }[], outside_domain: unknown[], outside_forecast: unknown[], above_bands: unknown[], missing_values?: Stretch[] }} ModelRoute */
/** @typedef {{ reftime: () => string | undefined, band: () => string | undefined, time: () => string | undefined }} Shown */

const ashQueries = (() => {
  "use strict";

  const formatTime = (/** @type {string} */ iso) => iso.slice(5, 16).replace("T", " ") + " UTC";
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
    /** @type {{ lat: number, lon: number, series: PointSeries[] } | undefined} */
    let place;
    let pointTicket = 0;

    /** The series of the band shown, as a list with the shown step marked. */
    function renderPlace() {
      const list = $("point-list");
      const title = $("point-title");
      if (!place) return;
      const band = shown.band();
      const series = place.series.filter((s) => s.label === band);
      title.textContent = `At ${place.lat.toFixed(2)}, ${place.lon.toFixed(2)}${band ? ` · ${band}` : ""}`;
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
      list.querySelector('[aria-current="true"]')?.scrollIntoView({ block: "nearest" });
      document.body.dataset.point = `${place.lat}|${place.lon}|${band}`;
    }

    /** The values at a place (`lon` within ±180), marked where it was clicked (`drawnLon`: past 180 on a run across it). */
    async function pointAt(/** @type {number} */ lat, /** @type {number} */ lon, drawnLon = lon) {
      const reftime = shown.reftime();
      if (!reftime) return;
      const ticket = ++pointTicket;
      placeLayer.clearLayers();
      L.circleMarker([lat, drawnLon], { radius: 6, color: "#0a58ca", weight: 2, fillOpacity: 0.3, interactive: false }).addTo(placeLayer);
      $("point").hidden = false;
      $("point-title").textContent = `At ${lat.toFixed(2)}, ${lon.toFixed(2)}`;
      $("point-list").replaceChildren(item("Loading…"));
      const url = new URL(`point?lat=${lat.toFixed(5)}&lon=${lon.toFixed(5)}&reftime=${encodeURIComponent(reftime)}`, api);
      const response = await fetch(url, { headers: { accept: "application/json" } });
      if (ticket !== pointTicket) return;
      if (!response.ok) {
        place = undefined;
        $("point-list").replaceChildren(item(await why(response)));
        document.body.dataset.point = `${lat}|${lon}|refused`;
        return;
      }
      const body = /** @type {{ series: PointSeries[] }} */ (await response.json());
      place = { lat, lon, series: body.series };
      renderPlace();
    }

    map.on("click", (event) => {
      const { lat, lng } = event.latlng;
      // Leaflet's longitudes run on past ±180 as the map is panned round the world.
      const lon = ((((lng + 180) % 360) + 360) % 360) - 180;
      void pointAt(lat, lon, lng);
    });

    async function route(/** @type {File} */ file) {
      const reftime = shown.reftime();
      const list = $("route-list");
      routeLayer.clearLayers();
      list.replaceChildren(item("Sending the route…"));
      const text = await file.text();
      /** @type {any} */
      let geojson;
      try {
        geojson = JSON.parse(text);
      } catch {
        list.replaceChildren(item(`${file.name} is not JSON: choose a GeoJSON file with one LineString Feature.`));
        return;
      }
      const url = new URL(`route${reftime ? `?reftime=${encodeURIComponent(reftime)}` : ""}`, api);
      const response = await fetch(url, { method: "POST", headers: { "content-type": "application/geo+json", accept: "application/json" }, body: text });
      if (!response.ok) {
        list.replaceChildren(item(await why(response)));
        document.body.dataset.route = "refused";
        return;
      }
      const answer = /** @type {{ models: ModelRoute[] }} */ (await response.json());
      // Longitudes made continuous (a flight across 180° goes on to 181, not back round the world), and the
      // encounters put on the same turn of the world, nearest the middle of the route.
      let previous = Number.NaN;
      const path = /** @type {number[][]} */ (geojson?.geometry?.coordinates ?? []).map(([lon = 0, lat = 0]) => {
        previous = ashKml.nearTurn(lon, Number.isNaN(previous) ? undefined : previous);
        return /** @type {L.LatLngTuple} */ ([lat, previous]);
      });
      const middle = path.length ? (Math.min(...path.map((p) => p[1])) + Math.max(...path.map((p) => p[1]))) / 2 : 0;
      const onRoute = (/** @type {{ lat: number, lon: number }} */ p) => /** @type {L.LatLngTuple} */ ([p.lat, ashKml.nearTurn(p.lon, middle)]);
      L.polyline(path, { color: "#0a58ca", weight: 2, interactive: false }).addTo(routeLayer);
      /** @type {HTMLLIElement[]} */
      const items = [];
      let encounters = 0;
      for (const model of answer.models) {
        for (const e of model.encounters ?? []) {
          encounters++;
          L.polyline([onRoute(e.entry), onRoute(e.exit)], { color: "#b00020", weight: 6, interactive: false }).addTo(routeLayer);
          items.push(item(`${e.band} ${e.class} up to ${mg(e.highest)}: ${e.entry.time ? formatTime(e.entry.time) : ""} at ${e.entry.km.toFixed(0)} km to ${e.exit.time ? formatTime(e.exit.time) : ""} at ${e.exit.km.toFixed(0)} km (FL${Math.round(e.entry.fl)})`, `class-${e.class}`));
        }
        let unknown = 0;
        let partly = 0;
        for (const s of model.steps ?? []) {
          if (s.value === null) unknown++;
          else if (s.class !== "none") items.push(item(`${formatTime(s.time)}: up to ${mg(s.value)} (${s.class}) in ${s.band}`, `class-${s.class}`));
          if (s.missing_share !== undefined) partly++;
        }
        if (unknown) items.push(item(`${model.model}: nothing is known along the route at ${unknown} of ${model.steps?.length} steps.`));
        if (partly) items.push(item(`${model.model}: the model has no value along part of the route at ${partly} of ${model.steps?.length} steps (nothing known there).`));
        // Where the model gave no value on a timed route: drawn grey and said, never left to read as clear.
        for (const gap of model.missing_values ?? []) L.polyline([onRoute(gap.from), onRoute(gap.to)], { color: "#6c757d", weight: 6, dashArray: "6 6", interactive: false }).addTo(routeLayer);
        if (model.missing_values?.length) items.push(item(`${model.model}: the model has no value along part of the route (nothing known there).`));
        if (model.outside_domain.length) items.push(item(`${model.model}: part of the route is outside the model's domain (nothing known there).`));
        if (model.outside_forecast.length) items.push(item(`${model.model}: part of the flight is outside the forecast's times.`));
        if (model.above_bands.length) items.push(item(`${model.model}: part of the route is above FL550, the highest band.`));
      }
      const timed = answer.models.some((m) => m.encounters !== undefined);
      if (!items.length) items.push(item(timed ? "No ash at or above the lowest threshold along the route." : "The route is clear at every step."));
      list.replaceChildren(...items);
      document.body.dataset.route = `${encounters}`;
      map.fitBounds(L.polyline(path).getBounds(), { padding: [24, 24], animate: false });
    }

    const input = /** @type {HTMLInputElement} */ ($("route-file"));
    input.addEventListener("change", () => {
      const file = input.files?.[0];
      if (file) route(file).catch((error) => ($("route-list").replaceChildren(item(`The route could not be sent: ${error.message}`))));
    });

    return { pointAt, refresh: renderPlace };
  }

  return { attach };
})();
