// Starts ReDoc on the API reference page (templates/capacityweb/redoc.html) from the
// container's data attributes: the schema's URL and drf-spectacular's REDOC_UI_SETTINGS.
// A file of its own, not an inline script, so the page keeps script-src 'self'.
(function () {
  "use strict";
  var container = document.getElementById("redoc-container");
  if (!container) { return; }
  Redoc.init(container.dataset.specUrl, JSON.parse(container.dataset.settings || "{}"), container);
})();
