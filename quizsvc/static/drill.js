// Drill keyboard: Enter submits (Ctrl/⌘+Enter inside a text area), 1–4 rate a recall item.
(function () {
  "use strict";
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" || target.tagName === "SELECT");
    var rateForm = document.getElementById("rate-form");
    if (rateForm && !typing && /^[1-4]$/.test(event.key)) {
      var button = rateForm.querySelector('button[data-key="' + event.key + '"]');
      if (button) { event.preventDefault(); button.click(); }
      return;
    }
    if (event.key === "Enter" && target && target.tagName === "TEXTAREA" && (event.ctrlKey || event.metaKey)) {
      var form = target.form;
      if (form) { event.preventDefault(); form.requestSubmit ? form.requestSubmit() : form.submit(); }
    }
  });
})();

// A text area with a maximum length shows how much of it is used, so a long
// explanation is noticed before it is sent (the server refuses it anyway).
(function () {
  "use strict";
  var areas = document.querySelectorAll("textarea[maxlength][data-counter]");
  Array.prototype.forEach.call(areas, function (area) {
    var counter = document.getElementById(area.dataset.counter);
    if (!counter || !counter.dataset.template) { return; }
    var max = parseInt(area.getAttribute("maxlength"), 10);
    var update = function () {
      counter.textContent = counter.dataset.template.replace("{used}", String(area.value.length));
      counter.classList.toggle("near-limit", area.value.length > max * 0.9);
    };
    area.addEventListener("input", update);
    update();
  });
})();
