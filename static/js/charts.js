// Places server-built Plotly figures: <div id="X"> + <script id="X-data" type="application/json">.
(function () {
  "use strict";
  function place() {
    document.querySelectorAll(".chart[id]").forEach(function (element) {
      var source = document.getElementById(element.id + "-data");
      if (!source || !window.Plotly) { return; }
      var figure = JSON.parse(source.textContent);
      window.Plotly.react(element, figure.data, figure.layout, { responsive: true, displayModeBar: false });
    });
  }
  place();
  document.addEventListener("capacityweb:updated", place);
})();
