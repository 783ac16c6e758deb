// The workload page's what-if, answered by a worker (recommender/whatif.py):
//
//   form POST ─► 303 to ?what-if=<id> ─► section#what-if[data-what-if-url][data-what-if-state]
//   queued / working: GET data-what-if-url every second (the request's state, small JSON)
//     ─► state changes: the status line says so
//     ─► done / failed: fetch this page once and put its #what-if section in place
//
// Polling the request's own URL, not the cluster's socket: the answer is one user's, and
// the socket's group is every viewer of the cluster.
(function () {
  "use strict";
  var POLL_MS = 1000;
  var WORDS = { queued: "Queued: waiting for a worker…", working: "Working: a worker is planning it again…" };

  function section() { return document.getElementById("what-if"); }

  function pending(box) {
    var state = box && box.dataset.whatIfState;
    return state === "queued" || state === "working";
  }

  function poll() {
    var box = section();
    if (!pending(box)) { return; }
    fetch(box.dataset.whatIfUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : Promise.reject(response.status); })
      .then(function (body) {
        if (body.state === "queued" || body.state === "working") {
          box.dataset.whatIfState = body.state;
          var line = document.getElementById("what-if-state");
          if (line) { line.textContent = WORDS[body.state]; line.dataset.state = body.state; }
          window.setTimeout(poll, POLL_MS);
          return;
        }
        showAnswer();
      })
      .catch(function (reason) {
        console.warn("capacityweb: what-if state", reason);
        window.setTimeout(poll, POLL_MS * 5);
      });
  }

  function showAnswer() {
    fetch(window.location.href, { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("what-if");
        var box = section();
        if (fresh && box) { box.replaceWith(document.importNode(fresh, true)); }
        document.dispatchEvent(new CustomEvent("capacityweb:what-if", { detail: { state: fresh && fresh.dataset.whatIfState } }));
        window.setTimeout(poll, POLL_MS);  // still pending when rendered: keep asking
      })
      .catch(function (reason) { console.warn("capacityweb: what-if answer", reason); });
  }

  window.setTimeout(poll, POLL_MS / 2);
})();
