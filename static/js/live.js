// Live updates over /ws/clusters/<id>/: typed, versioned messages applied in place.
//
//   connect ─► snapshot on connect ─► heatmap/pending/recommendations.update ─► apply
//      ▲                                                                         │
//      └── drop: reconnect after 0.5 s, 1 s, 2 s … 30 s, then send {"type": "resync"}
//   quiet for <body data-live-poll-seconds> (LIVE_POLL_SECONDS): send {"type": "resync",
//   "evaluation": shown}; the server answers only if its latest evaluation is another. So
//   a change published where this server does not listen (`manage.py ingest` in a second
//   shell beside `make run`'s in-process channel layer) still reaches the page.
//
// Every element with data-ws-path and data-live="on" opens one socket (a cluster
// page has one; the overview one per cluster). A message names its evaluation; a
// new evaluation re-renders the page's live regions ([data-live-region] with an id)
// from the same URL and calls the page's own handler for the type (the heatmap's
// Plotly.react). "snapshot.ingested" (a newer snapshot stored, its evaluation on its
// way) fills the page's #newer-snapshot note; the evaluation's update re-renders that
// region from the server, which clears it; "snapshot.failed" (its evaluation failed)
// re-renders the regions, whose note then names the failure. The overview's list socket
// (/ws/clusters/) says "clusters.update" with every cluster's id, on connect and when one is
// added: a card the page lacks is taken from the page's URL afresh, put in its place, and
// its own socket opened. "evaluation.part" (a deferred part of an evaluation stored, its
// "being worked out" answered) re-renders the regions of the page showing that evaluation.
// An unknown version or type is ignored with a console.warn.
(function () {
  "use strict";
  var SUPPORTED_VERSION = 1;
  var KNOWN_TYPES = ["heatmap.update", "pending.update", "recommendations.update", "snapshot.ingested",
    "snapshot.failed", "clusters.update", "evaluation.part"];
  var MAX_DELAY_MS = 30000;
  var BASE_DELAY_MS = 500;
  var POLL_MS = 1000 * (Number(document.body.dataset.livePollSeconds) || 30);
  var capacityweb = (window.capacityweb = window.capacityweb || { handlers: {} });
  var regionRefresh = null;
  capacityweb.sockets = [];
  capacityweb.updates = 0;

  function liveChannel(status) {
    var attempts = 0;
    var connectedBefore = false;
    var channel = { status: status, socket: null };
    var lastHeard = Date.now();

    function setStatus(text, state) {
      if (status.dataset.statusText !== "off") { status.textContent = text; }
      status.dataset.state = state;
    }

    function connect() {
      var scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
      var socket = new WebSocket(scheme + "//" + window.location.host + status.dataset.wsPath);
      channel.socket = socket;
      socket.addEventListener("open", function () {
        attempts = 0;
        setStatus("live: connected", "open");
        if (connectedBefore) { socket.send(JSON.stringify({ type: "resync" })); }
        connectedBefore = true;
      });
      socket.addEventListener("message", function (event) {
        lastHeard = Date.now();
        var message;
        try { message = JSON.parse(event.data); } catch (error) {
          console.warn("capacityweb: ignoring a message that is not JSON");
          return;
        }
        apply(status, message);
      });
      socket.addEventListener("close", function (event) {
        if (event.code === 4401 || event.code === 4404) {
          setStatus(event.code === 4401 ? "live: sign in again" : "live: unknown cluster", "refused");
          return;
        }
        var delay = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * Math.pow(2, attempts));
        attempts += 1;
        setStatus("live: reconnecting in " + Math.max(1, Math.round(delay / 1000)) + " s", "reconnecting");
        window.setTimeout(connect, delay + Math.random() * 250);
      });
    }

    // Quiet for POLL_MS: ask for the latest evaluation unless it is the one shown.
    window.setInterval(function () {
      var socket = channel.socket;
      if (!socket || socket.readyState !== WebSocket.OPEN || Date.now() - lastHeard < POLL_MS) { return; }
      lastHeard = Date.now();
      socket.send(JSON.stringify({ type: "resync", evaluation: status.dataset.evaluation || "" }));
    }, Math.min(POLL_MS, 5000));

    channel.connect = connect;
    return channel;
  }

  function apply(status, message) {
    if (!message || message.version !== SUPPORTED_VERSION) {
      console.warn("capacityweb: ignoring message of unsupported version", message && message.version);
      return;
    }
    if (KNOWN_TYPES.indexOf(message.type) < 0) {
      console.warn("capacityweb: ignoring message of unknown type", message.type);
      return;
    }
    if (message.type === "clusters.update") { addClusterCards((message.data && message.data.clusters) || []); return; }
    if (message.type === "snapshot.ingested") { showNewerSnapshot(status, message); return; }
    // the server renders the failure and its reason into the note
    if (message.type === "snapshot.failed") { refreshRegions(status.dataset.evaluation || ""); return; }
    var evaluation = String(message.evaluation || "");
    if (message.type === "evaluation.part") {
      if (evaluation === (status.dataset.evaluation || "")) { refreshRegions(evaluation); }
      return;
    }
    if (evaluation === (status.dataset.evaluation || "")) { return; }
    var handler = capacityweb.handlers[message.type];
    if (handler) { handler(message); }
    scheduleRegionRefresh(status, evaluation, message.snapshot);
  }

  // Cards of clusters the overview does not show yet, in the server's order, each live.
  var addingCards = false;
  var clustersToAdd = null;  // a list heard while adding: looked at once that is done

  function shownCard(cards, id) {
    return cards.querySelector('article.card[data-cluster="' + Number(id) + '"]');
  }

  function addClusterCards(clusters) {
    var cards = document.querySelector(".cards");
    if (!cards) { return; }
    if (addingCards) { clustersToAdd = clusters; return; }
    if (clusters.every(function (id) { return shownCard(cards, id); })) { return; }
    addingCards = true;
    fetch(window.location.href, { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        fresh.querySelectorAll(".cards > article.card[data-cluster]").forEach(function (card) {
          if (shownCard(cards, card.dataset.cluster)) { return; }
          var before = null;
          for (var next = card.nextElementSibling; next && !before; next = next.nextElementSibling) {
            before = shownCard(cards, next.dataset.cluster);
          }
          var added = cards.insertBefore(document.importNode(card, true), before);
          added.querySelectorAll('[data-ws-path][data-live="on"]').forEach(startChannel);
        });
        var empty = document.getElementById("no-cluster");
        if (empty && cards.children.length) { empty.remove(); }
      })
      .catch(function (reason) { console.warn("capacityweb: adding cluster cards failed", reason); })
      .then(function () {
        addingCards = false;
        var heard = clustersToAdd;
        clustersToAdd = null;
        if (heard) { addClusterCards(heard); }
      });
  }

  // The same words as the server's note (templates/dashboard/_cluster_header.html).
  function showNewerSnapshot(status, message) {
    var box = document.getElementById("newer-snapshot");
    var shown = Number(status.dataset.snapshot || 0);
    if (!box || !(Number(message.snapshot) > shown)) { return; }
    var takenAt = new Date(message.data && message.data.takenAt);
    var when = isNaN(takenAt.getTime()) ? "" : " (" + takenAt.toISOString().slice(0, 19).replace("T", " ") + " UTC)";
    var note = document.createElement("p");
    note.className = "muted newer-snapshot";
    note.setAttribute("role", "status");
    note.textContent = "Newer snapshot #" + message.snapshot + when + " is being evaluated: this page shows #" +
      shown + ", the latest evaluated, and updates when it is done.";
    box.replaceChildren(note);
    box.dataset.snapshot = String(message.snapshot);
  }

  // All messages of one evaluation arrive together: refresh the regions once.
  function scheduleRegionRefresh(status, evaluation, snapshot) {
    if (regionRefresh) { window.clearTimeout(regionRefresh); }
    regionRefresh = window.setTimeout(function () {
      regionRefresh = null;
      status.dataset.evaluation = evaluation;
      if (snapshot) { status.dataset.snapshot = String(snapshot); }
      refreshRegions(evaluation);
    }, 50);
  }

  // The lines a reader opened (<details data-workload>) stay open across a refresh.
  function openedLines() {
    return Array.prototype.map.call(
      document.querySelectorAll("details[open][data-workload]"),
      function (line) { return line.dataset.workload; }
    );
  }

  function reopen(workloads) {
    workloads.forEach(function (workload) {
      var line = document.querySelector('details[data-workload="' + CSS.escape(workload) + '"]');
      if (line) { line.open = true; }
    });
  }

  function refreshRegions(evaluation) {
    var regions = document.querySelectorAll("[data-live-region][id]");
    if (!regions.length) { return; }
    fetch(window.location.href, { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        var opened = openedLines();
        regions.forEach(function (region) {
          var replacement = fresh.getElementById(region.id);
          if (replacement) { region.replaceWith(document.importNode(replacement, true)); }
        });
        reopen(opened);
        capacityweb.updates += 1;
        document.body.dataset.liveUpdates = String(capacityweb.updates);
        document.dispatchEvent(new CustomEvent("capacityweb:updated", { detail: { evaluation: evaluation } }));
      })
      .catch(function (reason) { console.warn("capacityweb: live refresh failed", reason); });
  }

  function startChannel(status) {
    var channel = liveChannel(status);
    capacityweb.sockets.push(channel);
    channel.connect();
  }

  if (!("WebSocket" in window)) { return; }
  document.querySelectorAll('[data-ws-path][data-live="on"]').forEach(startChannel);
})();
