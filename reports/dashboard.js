// walkfuzz dashboard: sortable tables and the workload/JDK filter. The page is complete
// without this script; it only adds interaction.
(function () {
  "use strict";
  function cellValue(td) {
    var v = td.getAttribute("data-v");
    if (v !== null && v !== "" && !isNaN(Number(v))) { return Number(v); }
    return td.textContent.trim().toLowerCase();
  }
  function sortBy(table, col, th) {
    var body = table.tBodies[0];
    if (!body) { return; }
    var asc = !th.classList.contains("asc");
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.classList.remove("asc", "desc"); });
    th.classList.add(asc ? "asc" : "desc");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a.cells[col]), y = cellValue(b.cells[col]);
      if (x === y) { return 0; }
      return (x < y ? -1 : 1) * (asc ? 1 : -1);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var head = table.tHead;
    if (!head) { return; }
    Array.prototype.forEach.call(head.rows[0].cells, function (th, col) {
      th.addEventListener("click", function () { sortBy(table, col, th); });
    });
  });
  var filter = document.getElementById("group-filter");
  if (filter) {
    filter.addEventListener("change", function () {
      document.querySelectorAll("article.group").forEach(function (g) {
        g.classList.toggle("hidden", filter.value !== "" && g.getAttribute("data-group") !== filter.value);
      });
    });
  }
  document.body.setAttribute("data-ready", String(document.querySelectorAll("svg.chart").length));
})();
