"use strict";
// The report's one script (its hash is in the page's Content-Security-Policy). It sorts and filters the grade
// table, opens a student's detail from its <template>, and draws heatmaps from data-heatmap. Every string it
// shows is read from an attribute and written with textContent: it never builds markup from data.
(function () {
  var SVG = "http://www.w3.org/2000/svg";
  function el(name, attrs, text) {
    var node = document.createElementNS(SVG, name);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function finite(v) { return typeof v === "number" && isFinite(v); }
  function colour(v, lo, hi) {
    if (!finite(v)) return v === "inf" ? "#3b0d0d" : v === "-inf" ? "#0d1f3b" : "#9a9a9a";
    var m = Math.max(Math.abs(lo), Math.abs(hi)) || 1, f = Math.min(1, Math.abs(v) / m);
    if (v < 0) return "rgb(" + Math.round(255 - 30 * f) + "," + Math.round(255 - 170 * f) + "," + Math.round(255 - 170 * f) + ")";
    return "rgb(" + Math.round(255 - 190 * f) + "," + Math.round(255 - 140 * f) + "," + Math.round(255 - 50 * f) + ")";
  }
  function label(v) {
    if (!finite(v)) return String(v);
    var a = Math.abs(v);
    return a !== 0 && (a < 0.01 || a >= 1000) ? v.toExponential(0) : String(+v.toPrecision(2));
  }
  // one matrix: rows are query positions i, columns key positions j; a colour scale underneath
  function matrix(m, lo, hi, diff, caption) {
    var n = m.length, cols = Math.max.apply(null, m.map(function (r) { return r.length; }));
    var cell = Math.max(14, Math.min(34, Math.floor(260 / Math.max(n, cols))));
    var left = 30, top = 30, w = left + cols * cell + 4, h = top + n * cell + 44;
    var svg = el("svg", {width: w, height: h, role: "img", "aria-label": caption});
    svg.appendChild(el("text", {x: left + cols * cell / 2, y: 10, "font-size": 10, "text-anchor": "middle", fill: "#556"}, "key position j"));
    svg.appendChild(el("text", {x: 8, y: top + n * cell / 2, "font-size": 10, "text-anchor": "middle", fill: "#556",
      transform: "rotate(-90 8 " + (top + n * cell / 2) + ")"}, "query i"));
    var bad = {};
    (diff || []).forEach(function (d) { bad[d[0] + "," + d[1]] = true; });
    for (var j = 0; j < cols; j++)
      svg.appendChild(el("text", {x: left + j * cell + cell / 2, y: top - 5, "font-size": 10, "text-anchor": "middle"}, String(j)));
    for (var i = 0; i < n; i++) {
      svg.appendChild(el("text", {x: left - 4, y: top + i * cell + cell / 2 + 4, "font-size": 10, "text-anchor": "end"}, String(i)));
      for (j = 0; j < m[i].length; j++) {
        var v = m[i][j], x = left + j * cell, y = top + i * cell;
        var r = el("rect", {x: x, y: y, width: cell, height: cell, fill: colour(v, lo, hi), stroke: "#fff"});
        if (bad[i + "," + j]) { r.setAttribute("stroke", "#d4141a"); r.setAttribute("stroke-width", 2.5); r.setAttribute("class", "differs"); }
        r.appendChild(el("title", {}, "[" + i + ", " + j + "] " + String(v)));
        svg.appendChild(r);
        if (cell >= 24) {
          var f = finite(v) ? Math.abs(v) / (Math.max(Math.abs(lo), Math.abs(hi)) || 1) : 1;
          svg.appendChild(el("text", {x: x + cell / 2, y: y + cell / 2 + 3.5, "font-size": 9.5, "text-anchor": "middle",
            fill: f > 0.6 ? "#fff" : "#1d2330"}, label(v)));
        }
      }
    }
    // colour scale: lo .. hi
    var sy = top + n * cell + 12, sw = Math.max(90, cols * cell), steps = 24;
    for (var s = 0; s < steps; s++)
      svg.appendChild(el("rect", {x: left + s * sw / steps, y: sy, width: sw / steps + 0.5, height: 9, fill: colour(lo + (hi - lo) * s / (steps - 1), lo, hi)}));
    svg.appendChild(el("text", {x: left, y: sy + 22, "font-size": 10}, label(lo)));
    svg.appendChild(el("text", {x: left + sw, y: sy + 22, "font-size": 10, "text-anchor": "end"}, label(hi)));
    var fig = document.createElement("figure"), cap = document.createElement("figcaption");
    cap.textContent = caption;
    fig.appendChild(cap); fig.appendChild(svg);
    return fig;
  }
  var store = document.getElementById("matrices"), matrices = [];
  try { matrices = store ? JSON.parse(store.textContent) : []; } catch (e) { matrices = []; }
  function drawHeatmaps(root) {
    root.querySelectorAll(".heatmap[data-heatmap]").forEach(function (box) {
      var d;
      try { d = JSON.parse(box.getAttribute("data-heatmap")); } catch (e) { return; }
      d.expected = matrices[d.expected]; d.got = matrices[d.got];
      if (!Array.isArray(d.expected) || !Array.isArray(d.got)) return;
      var lo = 0, hi = 0, diff = [];
      d.expected.concat(d.got).forEach(function (row) {
        row.forEach(function (v) { if (finite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } });
      });
      if (lo === hi) hi = lo + 1;
      d.got.forEach(function (row, i) {
        row.forEach(function (v, j) {
          var e = (d.expected[i] || [])[j];
          if (finite(v) && finite(e) ? Math.abs(v - e) > 1e-3 + 1e-3 * Math.abs(e) : String(v) !== String(e)) diff.push([i, j]);
        });
      });
      box.removeAttribute("data-heatmap");
      box.textContent = "";
      box.appendChild(matrix(d.expected, lo, hi, null, "expected"));
      box.appendChild(matrix(d.got, lo, hi, diff, "submitted (red outline: differs, " + diff.length + " cells)"));
      var t = document.createElement("div");
      t.className = "title";
      t.textContent = d.title;
      box.appendChild(t);
    });
  }
  drawHeatmaps(document);

  var table = document.getElementById("gradetable");
  if (!table) return;
  var body = table.tBodies[0], filter = document.getElementById("filter"), show = document.getElementById("show");
  var count = document.getElementById("count");
  function rows() { return Array.prototype.filter.call(body.rows, function (r) { return r.hasAttribute("data-i"); }); }
  function closeDetail(row) {
    var next = row.nextElementSibling;
    if (next && next.classList.contains("detail")) { next.remove(); return true; }
    return false;
  }
  function apply() {
    var q = filter.value.trim().toLowerCase(), which = show.value, shown = 0, all = rows();
    all.forEach(function (r) {
      var ok = (!q || r.getAttribute("data-search").indexOf(q) >= 0) &&
        (which === "all" || (which === "full" && r.dataset.state === "full") ||
         (which === "partial" && r.dataset.state === "partial") || (which === "off" && r.dataset.off === "1") ||
         (which === "mistake" && r.dataset.m === "1"));
      r.hidden = !ok;
      var next = r.nextElementSibling;
      if (next && next.classList.contains("detail")) next.hidden = !ok;
      if (ok) shown++;
    });
    count.textContent = shown === all.length ? all.length + " students" : shown + " of " + all.length + " students";
  }
  filter.addEventListener("input", apply);
  show.addEventListener("change", apply);
  document.querySelectorAll("button[data-filter]").forEach(function (b) {
    b.addEventListener("click", function () {
      filter.value = b.getAttribute("data-filter");
      show.value = "all";
      apply();
      history.replaceState(null, "", "#filter=" + encodeURIComponent(filter.value));
      document.getElementById("grades").scrollIntoView();
    });
  });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
    th.addEventListener("click", function () {
      var numeric = th.getAttribute("data-sort") === "num";
      var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
      Array.prototype.forEach.call(th.parentNode.cells, function (c) { c.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
      var all = rows();
      all.forEach(closeDetail);
      all.sort(function (a, b) {
        var x = a.cells[col], y = b.cells[col];
        var c = numeric ? parseFloat(x.getAttribute("data-v")) - parseFloat(y.getAttribute("data-v"))
                        : x.textContent.localeCompare(y.textContent);
        return dir * c || (+a.dataset.i - +b.dataset.i);
      });
      all.forEach(function (r) { body.appendChild(r); });
    });
  });
  body.addEventListener("click", function (ev) {
    var button = ev.target.closest("button.open");
    if (!button) return;
    var row = button.closest("tr");
    if (closeDetail(row)) return;
    var tpl = document.getElementById("t" + row.dataset.i);
    var tr = document.createElement("tr"), td = document.createElement("td");
    tr.className = "detail";
    td.colSpan = row.cells.length;
    td.appendChild(tpl.content.cloneNode(true));
    tr.appendChild(td);
    row.after(tr);
    drawHeatmaps(td);
  });
  // a link to #filter=<text> filters the table; one to #student=<name> opens that student's detail
  var given = decodeURIComponent((location.hash.match(/^#filter=(.*)$/) || [])[1] || "");
  if (given) { filter.value = given; apply(); }
  var wanted = decodeURIComponent((location.hash.match(/^#student=(.*)$/) || [])[1] || "");
  if (wanted) rows().forEach(function (r) {
    var b = r.querySelector("button.open");
    if (b && b.textContent === wanted) { b.click(); r.scrollIntoView(); }
  });
})();
