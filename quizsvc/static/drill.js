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
