// The "Move instead of buy" section (templates/dashboard/_moves.html), worked out by a
// worker after the evaluation is stored (recommender/moves.py):
//
//   section#moves[data-moves-state="working"][data-moves-url] ─► GET the url every 2 s
//     (/api/v1/moves/?evaluation=<id>: empty until the report is stored)
//     ─► a report listed: fetch this page once and put its #moves section in place
//
// A new evaluation re-renders the section through live.js (it is a live region).
(function () {
  "use strict";
  var POLL_MS = 2000;

  function section() { return document.getElementById("moves"); }

  function poll() {
    var box = section();
    if (!box || box.dataset.movesState !== "working" || !box.dataset.movesUrl) { return; }
    fetch(box.dataset.movesUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : Promise.reject(response.status); })
      .then(function (body) {
        if (!body.count) { window.setTimeout(poll, POLL_MS); return; }
        return fetch(window.location.href, { credentials: "same-origin" })
          .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
          .then(function (html) {
            var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("moves");
            var current = section();
            if (fresh && current) { current.replaceWith(document.importNode(fresh, true)); }
            if (fresh && fresh.dataset.movesState === "working") { window.setTimeout(poll, POLL_MS); }
          });
      })
      .catch(function (reason) {
        console.warn("capacityweb: moves poll failed", reason);
        window.setTimeout(poll, 5 * POLL_MS);
      });
  }

  document.addEventListener("capacityweb:updated", function () { window.setTimeout(poll, POLL_MS); });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", poll);
  } else {
    poll();
  }
})();
