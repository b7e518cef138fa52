// Redraw the explore page's softmax row and heatmap as the sliders move.
// No library: the server renders the SVGs; this only changes widths, fills and labels.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("explore-data").textContent);
  var form = document.getElementById("explore-form");
  var dInput = document.getElementById("explore-d");
  var tInput = document.getElementById("explore-t");
  var scaled = document.getElementById("explore-scaled");

  function softmaxRow(row) {
    var peak = Math.max.apply(null, row);
    var exps = row.map(function (x) { return Math.exp(x - peak); });
    var total = exps.reduce(function (a, b) { return a + b; }, 0);
    return exps.map(function (e) { return e / total; });
  }

  function fill(t) {
    var start = [244, 248, 252], end = [8, 48, 107];
    var c = start.map(function (s, i) { return Math.round(s + (end[i] - s) * t); });
    return "rgb(" + c.join(",") + ")";
  }

  function redraw() {
    var d = data.d_values[Number(dInput.value)];
    var temperature = Number(tInput.value);
    var scale = scaled.checked ? 1 / Math.sqrt(d) : 1;
    var weights = data.scores[String(d)].map(function (row) {
      return softmaxRow(row.map(function (x) { return x * scale / temperature; }));
    });
    document.getElementById("explore-d-out").textContent = d;
    document.getElementById("explore-t-out").textContent = temperature.toFixed(2);
    var bars = document.querySelectorAll("#row-chart rect.bar");
    var values = document.querySelectorAll("#row-chart text.value");
    var background = document.querySelector("#row-chart rect:not(.bar)");
    var full = background ? Number(background.getAttribute("width")) : 200;
    weights[0].forEach(function (w, j) {
      bars[j].setAttribute("width", (w * full).toFixed(1));
      values[j].textContent = w.toFixed(2);
    });
    var cells = document.querySelectorAll("#heatmap rect.hm");
    var labels = document.querySelectorAll("#heatmap text.cell");
    var cols = weights[0].length;
    weights.forEach(function (row, i) {
      row.forEach(function (w, j) {
        var n = i * cols + j;
        cells[n].setAttribute("fill", fill(w));
        labels[n].textContent = w.toFixed(2);
        labels[n].setAttribute("fill", w > 0.55 ? "#ffffff" : "#222");
      });
    });
    var params = new URLSearchParams({ d: d, t: temperature, scaled: scaled.checked ? "1" : "0" });
    history.replaceState(null, "", "?" + params.toString());
  }

  [dInput, tInput, scaled].forEach(function (input) {
    input.addEventListener("input", redraw);
  });
  form.addEventListener("submit", function (event) { event.preventDefault(); redraw(); });
})();
