/* attnbook.explore: the attention view's behaviour. Inline in the page, no network request.
   The view opens as a picture with the live part hidden; this script swaps them.
   The weights are the view's inline JSON: w[layer][head][query][key], integers in units of
   1/scale. A token's shading is its weight: the CSS variable --w, an alpha from 0 to 1. */
(function (root) {
  "use strict";
  if (!root || root.getAttribute("data-ready")) { return; }
  root.setAttribute("data-ready", "1");
  // scripts run here: the picture (for where they do not) gives way to the live view
  var picture = root.querySelector(".attnx-picture");
  if (picture) { picture.remove(); }
  root.querySelector(".attnx-live").hidden = false;
  var data = JSON.parse(root.querySelector(".attnx-data").textContent);
  var W = data.w, scale = data.scale;
  var nQ = W[0][0].length, nK = W[0][0][0].length;
  var state = { layer: data.start[0], head: data.start[1], query: data.start[2] };
  var queries = Array.prototype.slice.call(root.querySelectorAll("[data-q]"));
  var keys = Array.prototype.slice.call(root.querySelectorAll("[data-k]"));
  var cells = Array.prototype.slice.call(root.querySelectorAll(".attnx-cell"));
  var layerSelect = root.querySelector(".attnx-layer");
  var headSelect = root.querySelector(".attnx-head");
  var status = root.querySelector(".attnx-status");
  var numbers = root.querySelector(".attnx-numbers tbody");
  var big = root.querySelector(".attnx-big canvas");
  // the big map's labels: every k-th query (row) and key (column), tokens or indices
  var rowLabels = Array.prototype.slice.call(root.querySelectorAll("[data-lq]"));
  var colLabels = Array.prototype.slice.call(root.querySelectorAll("[data-lk]"));

  function weight(l, h, q, k) { return W[l][h][q][k] / scale; }
  function label(i, tokens) { return "\u201c" + tokens[i] + "\u201d"; }

  function rgb() {
    var parts = getComputedStyle(root).getPropertyValue("--attnx-rgb").trim().split(/\s+/);
    return parts.length === 3 ? parts.map(Number) : [0, 114, 178];
  }

  // one head's (queries x keys) map, `px` pixels per weight; the query's row outlined
  function draw(canvas, l, h, px, row) {
    var color = rgb();
    canvas.width = nK * px;
    canvas.height = nQ * px;
    var ctx = canvas.getContext("2d");
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    for (var q = 0; q < nQ; q++) {
      for (var k = 0; k < nK; k++) {
        ctx.fillStyle = "rgba(" + color.join(",") + "," + weight(l, h, q, k) + ")";
        ctx.fillRect(k * px, q * px, px, px);
      }
    }
    if (row !== undefined) {
      ctx.strokeStyle = getComputedStyle(root).getPropertyValue("--attnx-fg");
      ctx.lineWidth = Math.max(1, px / 4);
      ctx.strokeRect(0.5, row * px + 0.5, canvas.width - 1, px - 1);
    }
  }

  function drawGrid() {
    cells.forEach(function (cell) {
      draw(cell.querySelector("canvas"), +cell.getAttribute("data-layer"),
           +cell.getAttribute("data-head"), 1);
    });
  }

  function render() {
    var l = state.layer, h = state.head, q = state.query, best = 0;
    // per-layer tokens: begin
    // each layer (state) is its own sequence: show its tokens, name them in the text
    if (data.texts) {
      data.tokens = data.texts[l];
      queries.forEach(function (span, i) { span.textContent = data.shown[l][i]; });
      if (root.querySelector(".attnx-tokens")) {
        rowLabels.concat(colLabels).forEach(function (el) {
          var text = data.shown[l][+(el.getAttribute("data-lq") || el.getAttribute("data-lk"))];
          el.textContent = text === " " ? "\u2423" : text;
        });
      }
    }
    // per-layer tokens: end
    keys.forEach(function (span, k) {
      var w = weight(l, h, q, k);
      span.style.setProperty("--w", String(w));
      span.classList.toggle("attnx-hi", w > 0.55);
      if (w > weight(l, h, q, best)) { best = k; }
    });
    queries.forEach(function (span, i) {
      var chosen = i === q;
      span.classList.toggle("attnx-q", chosen);
      span.setAttribute("tabindex", chosen ? "0" : "-1");
      span.setAttribute("aria-selected", chosen ? "true" : "false");
    });
    rowLabels.forEach(function (el) {
      el.classList.toggle("attnx-on", +el.getAttribute("data-lq") === q);
    });
    colLabels.forEach(function (el) {
      el.classList.toggle("attnx-on", +el.getAttribute("data-lk") === best);
    });
    cells.forEach(function (cell) {
      var on = +cell.getAttribute("data-layer") === l && +cell.getAttribute("data-head") === h;
      cell.setAttribute("aria-pressed", on ? "true" : "false");
    });
    if (layerSelect) { layerSelect.value = String(l); }
    if (headSelect) { headSelect.value = String(h); }
    status.textContent = data.layers[l] + ", " + data.heads[h] + ": query " + q + " " +
      label(q, data.tokens) + " puts most weight (" + weight(l, h, q, best).toFixed(3) +
      ") on key " + best + " " + label(best, data.keys || data.tokens);
    var rows = [];
    for (var k = 0; k < nK; k++) {
      var tr = document.createElement("tr");
      [String(k), (data.keys || data.tokens)[k], weight(l, h, q, k).toFixed(3)].forEach(
        function (text, c) {
          var td = document.createElement("td");
          td.textContent = text;
          if (c === 2) { td.className = "attnx-num"; }
          tr.appendChild(td);
        });
      rows.push(tr);
    }
    numbers.replaceChildren.apply(numbers, rows);
    root.setAttribute("data-state", [l, h, q].join(","));
    if (big) { draw(big, l, h, Math.max(2, Math.floor(240 / Math.max(nQ, nK))), q); }
  }

  function choose(q, focus) {
    state.query = Math.max(0, Math.min(nQ - 1, q));
    render();
    if (focus) { queries[state.query].focus(); }
  }

  queries.forEach(function (span, i) {
    span.addEventListener("pointerenter", function (event) {
      if (event.pointerType === "mouse") { choose(i, false); }
    });
    span.addEventListener("click", function () { choose(i, false); });
    span.addEventListener("focus", function () { if (state.query !== i) { choose(i, false); } });
    span.addEventListener("keydown", function (event) {
      var moves = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
      if (event.key in moves) { choose(state.query + moves[event.key], true); }
      else if (event.key === "Home") { choose(0, true); }
      else if (event.key === "End") { choose(nQ - 1, true); }
      else { return; }
      event.preventDefault();
    });
  });
  if (layerSelect) {
    layerSelect.addEventListener("change", function () { state.layer = +layerSelect.value; render(); });
  }
  if (headSelect) {
    headSelect.addEventListener("change", function () { state.head = +headSelect.value; render(); });
  }
  cells.forEach(function (cell) {
    cell.addEventListener("click", function () {
      state.layer = +cell.getAttribute("data-layer");
      state.head = +cell.getAttribute("data-head");
      render();
    });
  });
  if (big) {
    big.addEventListener("click", function (event) {
      var box = big.getBoundingClientRect();
      choose(Math.floor((event.clientY - box.top) / box.height * nQ), false);
    });
  }
  // the theme may change while the page is open: redraw the maps in the new colours
  function redraw() { drawGrid(); render(); }
  if (window.MutationObserver) {
    var watch = new MutationObserver(redraw);
    watch.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    if (document.body) {
      watch.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light"] });
    }
  }
  if (window.matchMedia) {
    var media = window.matchMedia("(prefers-color-scheme: dark)");
    if (media.addEventListener) { media.addEventListener("change", redraw); }
  }
  redraw();
})(document.getElementById("__ATTNX_ID__"));
