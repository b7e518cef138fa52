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

// The break between learning steps: count down to the time the next step may
// be asked, then load the drill again (the page's meta refresh does the same
// without script).
(function () {
  "use strict";
  var counter = document.getElementById("countdown");
  if (!counter) { return; }
  var end = Date.now() + 1000 * parseInt(counter.dataset.seconds, 10);
  var tick = function () {
    var left = Math.max(0, Math.ceil((end - Date.now()) / 1000));
    if (left === 0) {
      counter.textContent = counter.dataset.doneText;
      window.location.reload();
      return;
    }
    var minutes = Math.floor(left / 60), seconds = left % 60;
    counter.textContent = counter.textContent.replace(/\d+(\D+)\d+/, minutes + "$1" + (seconds < 10 ? "0" : "") + seconds);
    window.setTimeout(tick, 1000);
  };
  window.setTimeout(tick, 1000);
})();
