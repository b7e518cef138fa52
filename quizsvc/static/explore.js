// Redraw the explore page's softmax row and heatmap as the sliders move.
// No library: the server renders the SVGs; this changes widths, fills and
// labels, and rewrites the charts' text alternatives (<desc>, each cell's
// <title>) and the sliders' spoken values so they never go stale.
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

  // The same shades and ink rule as quizsvc/web/charts.py: the label is black
  // or white, whichever contrasts more (never below 4.58:1).
  function shade(t) {
    var start = [244, 248, 252], end = [8, 48, 107];
    t = Math.min(Math.max(t, 0), 1);
    return start.map(function (s, i) { return Math.round(s + (end[i] - s) * t); });
  }

  function luminance(rgb) {
    var c = rgb.map(function (v) {
      v /= 255;
      return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  }

  function ink(rgb) {
    var l = luminance(rgb);
    return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#000000" : "#ffffff";
  }

  function number(w, digits) {
    return isFinite(w) ? w.toFixed(digits) : data.undefined;
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
    dInput.setAttribute("aria-valuetext", "d = " + d);
    tInput.setAttribute("aria-valuetext", "τ = " + Number(temperature.toFixed(2)));

    var bars = document.querySelectorAll("#row-chart rect.bar");
    var values = document.querySelectorAll("#row-chart text.value");
    var background = document.querySelector("#row-chart rect:not(.bar)");
    var full = background ? Number(background.getAttribute("width")) : 200;
    weights[0].forEach(function (w, j) {
      bars[j].setAttribute("width", (w * full).toFixed(1));
      values[j].textContent = number(w, 2);
    });
    var rowDesc = document.querySelector("#row-chart desc");
    if (rowDesc) {
      rowDesc.textContent = weights[0].map(function (w, j) { return "k" + j + ": " + number(w, 2); }).join("; ");
    }

    var cells = document.querySelectorAll("#heatmap rect.hm");
    var labels = document.querySelectorAll("#heatmap text.cell");
    var cols = weights[0].length;
    weights.forEach(function (row, i) {
      row.forEach(function (w, j) {
        var n = i * cols + j, rgb = shade(w);
        cells[n].setAttribute("fill", "rgb(" + rgb.join(",") + ")");
        var title = cells[n].querySelector("title");
        if (title) { title.textContent = "q" + i + " → k" + j + ": " + number(w, 2); }
        labels[n].textContent = number(w, 2);
        labels[n].setAttribute("fill", ink(rgb));
      });
    });
    var mapDesc = document.querySelector("#heatmap desc");
    if (mapDesc) {
      mapDesc.textContent = weights.map(function (row, i) {
        return "q" + i + ": " + row.map(function (w, j) { return "k" + j + "=" + number(w, 4); }).join(", ");
      }).join("; ");
    }
    var params = new URLSearchParams({ d: d, t: temperature, scaled: scaled.checked ? "1" : "0" });
    history.replaceState(null, "", "?" + params.toString());
  }

  [dInput, tInput, scaled].forEach(function (input) {
    input.addEventListener("input", redraw);
  });
  form.addEventListener("submit", function (event) { event.preventDefault(); redraw(); });
})();
