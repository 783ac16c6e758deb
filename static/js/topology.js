// The topology heatmap, drawn and redrawn with Plotly.react: above rack level one
// stacked bar per domain (free / idle reserved / allocated GPUs), from rack level
// down one heatmap trace with a cell per GPU (or per 0.1-GPU share).
//
//   cluster ─click─► zone ─► block ─► rack (nodes × GPUs) ─► node (GPUs × shares) ─► device
//      ▲_______________________ breadcrumb / browser back ______________________________|
//
// The server sends the whole figure (topology/charts.py); this file only places it,
// turns clicks into the next domain, and refetches data.json on live updates.
(function () {
  "use strict";
  var FILTER_KEYS = ["node_group", "gpu_model", "reservation", "team", "snapshot"];
  var capacityweb = (window.capacityweb = window.capacityweb || { handlers: {} });
  var element = document.getElementById("heatmap");
  var initial = document.getElementById("heatmap-data");
  if (!element || !initial || !window.Plotly) { return; }
  var view = JSON.parse(initial.textContent);
  var config = { responsive: true, displayModeBar: false };

  function draw(payload) {
    view = payload;
    element.dataset.domain = payload.domain;
    element.dataset.depth = String(payload.depth);
    element.dataset.cells = String(payload.cellCount);
    element.dataset.gpus = String(payload.gpuCount);
    element.dataset.kind = payload.kind;
    // "heatmap-draw" measures each draw (read by the browser tests and the devtools).
    performance.mark("heatmap-draw-start");
    var drawn = window.Plotly.react(element, payload.figure.data, payload.figure.layout, config);
    renderBreadcrumb(payload.breadcrumb);
    renderSummary(payload);
    renderFigures(payload.clusterFigures);
    renderPods(payload.pods || []);
    renderDrillSelect(payload);
    return drawn.then(function () {
      performance.measure("heatmap-draw", "heatmap-draw-start");
      element.dataset.rendered = payload.domain + "#" + payload.cellCount;
    });
  }

  function renderBreadcrumb(crumbs) {
    var nav = document.getElementById("heatmap-breadcrumb");
    nav.replaceChildren();
    crumbs.forEach(function (crumb, index) {
      if (index > 0) { nav.append(" › "); }
      var last = index === crumbs.length - 1;
      var item = document.createElement(last ? "span" : "a");
      item.textContent = crumb.label;
      if (last) { item.setAttribute("aria-current", "location"); } else {
        item.href = urlFor(crumb.domain, window.location.search);
        item.dataset.domain = crumb.domain;
      }
      nav.append(item);
    });
  }

  function renderSummary(payload) {
    var summary = document.getElementById("heatmap-summary");
    var unit = payload.kind === "domains" ? "a " + payload.childLevel + "'s bar" : "a cell";
    summary.textContent = payload.gpuCount + " GPUs at " + payload.level +
      " level. Click " + unit + " to drill down; use the breadcrumb to go back up.";
  }

  // The whole cluster's totals line, from the same payload as the bars (topology/figures.py).
  function renderFigures(figures) {
    if (!figures) { return; }
    var spans = { "allocated": figures.allocated, "idle-reserved": figures.idle_reserved,
      "idle-reserved-unprovisioned": figures.idle_reserved_unprovisioned, "free": figures.free };
    Object.keys(spans).forEach(function (key) {
      var span = document.querySelector('#topology-figures [data-figure="' + key + '"]');
      if (span) { span.textContent = String(spans[key]); }
    });
  }

  function renderPods(pods) {
    var list = document.getElementById("device-pods");
    list.replaceChildren();
    pods.forEach(function (pod) {
      var item = document.createElement("li");
      item.textContent = pod;
      list.append(item);
    });
  }

  // Keyboard (and no-script) route to every drill-down a click offers.
  function renderDrillSelect(payload) {
    var select = document.getElementById("drill-select");
    if (!select) { return; }
    select.replaceChildren();
    payload.children.forEach(function (child) {
      var option = document.createElement("option");
      option.value = child.domain;
      option.textContent = child.label;
      select.append(option);
    });
    select.closest("form").hidden = payload.children.length === 0;
  }

  function urlFor(domain, search) {
    var params = new URLSearchParams(search);
    if (domain) { params.set("domain", domain); } else { params.delete("domain"); }
    var query = params.toString();
    return window.location.pathname + (query ? "?" + query : "");
  }

  function dataUrl(domain, latest) {
    var current = new URLSearchParams(window.location.search);
    var params = new URLSearchParams();
    FILTER_KEYS.forEach(function (key) {
      if (current.get(key) && !(latest && key === "snapshot")) { params.set(key, current.get(key)); }
    });
    if (domain) { params.set("domain", domain); }
    return element.dataset.url + "?" + params.toString();
  }

  function load(domain, options) {
    return fetch(dataUrl(domain, options && options.latest), { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : Promise.reject(response.status); })
      .then(function (payload) {
        if (options && options.push) {
          window.history.pushState({ domain: domain }, "", urlFor(domain, window.location.search));
        }
        return draw(payload);
      })
      .catch(function (reason) { console.warn("capacityweb: heatmap load failed", reason); });
  }

  draw(view).then(function () {
    element.on("plotly_click", function (event) {
      var point = event.points && event.points[0];
      if (!point) { return; }
      var target;
      if (view.kind === "domains") {
        target = point.customdata;  // the bar's own domain, whatever its height
      } else {
        if (point.z === null || point.z === undefined) { return; }
        var row = Array.isArray(point.pointIndex) ? point.pointIndex[0] : point.pointNumber[0];
        target = view.rowTargets[row];
      }
      if (target !== null && target !== undefined) { load(target, { push: true }); }
    });
  });

  document.getElementById("heatmap-breadcrumb").addEventListener("click", function (event) {
    var link = event.target.closest("a[data-domain]");
    if (!link) { return; }
    event.preventDefault();
    load(link.dataset.domain, { push: true });
  });

  var drillForm = document.getElementById("drill-form");
  if (drillForm) {
    drillForm.addEventListener("submit", function (event) {
      event.preventDefault();
      load(document.getElementById("drill-select").value, { push: true });
    });
  }

  window.addEventListener("popstate", function () {
    load(new URLSearchParams(window.location.search).get("domain") || "", {});
  });

  capacityweb.handlers["heatmap.update"] = function () {
    return load(view.domain, { latest: true });
  };
  capacityweb.heatmap = { load: load, view: function () { return view; } };
})();
