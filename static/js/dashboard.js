// Page helpers shared by every dashboard page: the cluster picker and copy buttons.
(function () {
  "use strict";
  window.capacityweb = window.capacityweb || { handlers: {} };

  document.querySelectorAll("form[data-cluster-picker]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var select = form.querySelector("select");
      if (select && select.value) { window.location.assign(select.value); }
    });
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-copy-target]");
    if (!button) { return; }
    var source = document.getElementById(button.dataset.copyTarget);
    if (!source) { return; }
    var label = button.dataset.label || (button.dataset.label = button.textContent);
    var done = function () {
      button.textContent = "Copied";
      window.setTimeout(function () { button.textContent = label; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(source.textContent).then(done, function () {
        selectText(source);
      });
    } else {
      selectText(source);
      button.textContent = "Selected: press Ctrl+C";
    }
  });

  function selectText(element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
})();
