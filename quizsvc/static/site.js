// Keyboard help on every page: arrow keys between the cells of an answer
// matrix, and boxes that scroll sideways reachable from the keyboard.
(function () {
  "use strict";

  // --- Arrow keys in a matrix: ←→↑↓ between cells, Home/End to the row's ends.
  // In a text cell ← and → (and Home/End) first move the cursor through what
  // was typed; they leave the cell once the cursor is at that edge, or when the
  // whole entry is selected (as it is on arriving in a cell). Tab is untouched.
  function cellsOf(grid) {
    return Array.prototype.map.call(grid.rows, function (row) {
      return Array.prototype.slice.call(row.querySelectorAll("input:not([type=hidden])"));
    });
  }

  function atEdge(input, towardsStart) {
    if (input.type !== "text") { return true; }
    var start = input.selectionStart, end = input.selectionEnd, length = input.value.length;
    if (start === 0 && end === length) { return true; }
    if (start !== end) { return false; }
    return towardsStart ? start === 0 : end === length;
  }

  document.addEventListener("keydown", function (event) {
    var input = event.target;
    if (!input || input.tagName !== "INPUT" || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) { return; }
    var grid = input.closest("table.grid");
    if (!grid) { return; }
    var rows = cellsOf(grid), i = -1, j = -1;
    rows.forEach(function (row, r) { var c = row.indexOf(input); if (c >= 0) { i = r; j = c; } });
    if (i < 0) { return; }
    var row = rows[i], target = null;
    switch (event.key) {
      case "ArrowUp": target = i > 0 ? rows[i - 1][j] : null; break;
      case "ArrowDown": target = i + 1 < rows.length ? rows[i + 1][j] : null; break;
      case "ArrowLeft": target = atEdge(input, true) ? row[j - 1] : null; break;
      case "ArrowRight": target = atEdge(input, false) ? row[j + 1] : null; break;
      case "Home": target = atEdge(input, true) ? row[0] : null; break;
      case "End": target = atEdge(input, false) ? row[row.length - 1] : null; break;
      default: return;
    }
    if (!target || target === input || target.disabled) { return; }
    event.preventDefault();
    target.focus();
    if (target.type === "text") { target.select(); }
  });

  // --- A box that scrolls sideways (a wide matrix or table on a phone) holds
  // content a keyboard must be able to scroll to: while it scrolls it is a
  // focusable region, named by its caption or its section's heading.
  var BOXES = "figure.matrix, .table-wrap, .chart, .heatmap-wrap";

  function nameOf(box) {
    var caption = box.querySelector("figcaption, caption, svg > title");
    if (caption && caption.textContent.trim()) { return caption.textContent.trim(); }
    var section = box.closest("section");
    var heading = section && section.querySelector("h2, h3");
    return heading ? heading.textContent.trim() : "";
  }

  function markScrollingBoxes() {
    Array.prototype.forEach.call(document.querySelectorAll(BOXES), function (box) {
      var scrolls = box.scrollWidth > box.clientWidth + 1;
      if (scrolls && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", nameOf(box));
        box.dataset.madeRegion = "1";
      } else if (!scrolls && box.dataset.madeRegion) {
        box.removeAttribute("tabindex");
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
        delete box.dataset.madeRegion;
      }
    });
  }

  var pending = false;
  function schedule() {
    if (pending) { return; }
    pending = true;
    window.requestAnimationFrame(function () { pending = false; markScrollingBoxes(); });
  }
  document.addEventListener("DOMContentLoaded", markScrollingBoxes);
  window.addEventListener("resize", schedule);
  window.addEventListener("load", schedule);
  document.addEventListener("toggle", schedule, true);
})();
