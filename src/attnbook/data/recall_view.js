/* attnbook.recall_view (chapter 11): the recall view's behaviour. Inline in the page, no
   network request. The view opens as a picture with the live part hidden; this script swaps
   them. The data is the view's inline JSON: cos[rule][n - 1][i], integers in units of
   1/scale, and hit[rule][n - 1], a string of n "1"s and "0"s (key i recalled or not). */
(function (root) {
  "use strict";
  if (!root || root.getAttribute("data-ready")) { return; }
  root.setAttribute("data-ready", "1");
  var picture = root.querySelector(".recallx-picture");
  if (picture) { picture.remove(); }
  root.querySelector(".recallx-live").hidden = false;
  var data = JSON.parse(root.querySelector(".recallx-data").textContent);
  var slider = root.querySelector(".recallx-n");
  var out = root.querySelector(".recallx-out");
  var status = root.querySelector(".recallx-status");
  var canvases = Array.prototype.slice.call(root.querySelectorAll(".recallx-rule canvas"));
  var counts = Array.prototype.slice.call(root.querySelectorAll(".recallx-count"));

  function css(name) { return getComputedStyle(root).getPropertyValue(name).trim(); }

  function hatch(ctx, colour, px) {
    var tile = document.createElement("canvas");
    tile.width = tile.height = 6 * px;
    var t = tile.getContext("2d");
    t.strokeStyle = colour; t.lineWidth = px;
    t.beginPath(); t.moveTo(0, 6 * px); t.lineTo(6 * px, 0); t.stroke();
    return ctx.createPattern(tile, "repeat");
  }

  function draw(canvas, r, n) {
    var px = window.devicePixelRatio || 1;
    var w = Math.max(1, Math.round(canvas.clientWidth * px));
    var h = Math.max(1, Math.round(canvas.clientHeight * px));
    canvas.width = w; canvas.height = h;
    var ctx = canvas.getContext("2d");
    var fg = css("--recallx-fg"), miss = css("--recallx-miss");
    var rgb = css("--recallx-rgb").split(/\s+/).join(",");
    var cos = data.cos[r][n - 1], hit = data.hit[r][n - 1];
    var x0 = 22 * px, slot = (w - x0) / data.cos[r].length;  // the same bar width at every count
    // cosines from -0.25 (lower ones are clipped; they are rare) to +1
    var lowest = -0.25, scale = (h - 4 * px) / ((1 - lowest) * data.scale);
    var mid = 2 * px + data.scale * scale;  // the zero line
    ctx.clearRect(0, 0, w, h);
    var pattern = hatch(ctx, miss, px);
    for (var i = 0; i < n; i++) {
      var x = x0 + i * slot + 0.1 * slot, bw = Math.max(0.8 * slot, px);
      var c = Math.max(cos[i], lowest * data.scale);
      var y = c >= 0 ? mid - c * scale : mid;
      var bh = Math.max(Math.abs(c) * scale, px);
      if (hit[i] === "1") {
        ctx.fillStyle = "rgb(" + rgb + ")"; ctx.fillRect(x, y, bw, bh);
      } else {
        ctx.fillStyle = pattern; ctx.fillRect(x, y, bw, bh);
        ctx.strokeStyle = miss; ctx.lineWidth = px;
        ctx.strokeRect(x + px / 2, y + px / 2, Math.max(bw - px, px), Math.max(bh - px, px));
      }
    }
    ctx.strokeStyle = fg; ctx.lineWidth = px;  // the zero line
    ctx.beginPath(); ctx.moveTo(x0, mid); ctx.lineTo(w, mid); ctx.stroke();
    ctx.fillStyle = fg; ctx.font = Math.round(11 * px) + "px sans-serif";
    ctx.fillText("+1", 2 * px, 12 * px); ctx.fillText("0", 2 * px, mid + 4 * px);
  }

  function show() {
    var n = Number(slider.value), parts = [];
    out.textContent = String(n);
    for (var r = 0; r < data.rules.length; r++) {
      var got = data.hit[r][n - 1].split("1").length - 1;
      counts[r].textContent = got + " of " + n + " keys recalled";
      parts.push(data.rules[r] + " " + got + " of " + n);
      canvases[r].setAttribute("aria-label", data.rules[r] + ": " + got + " of " + n +
        " stored keys recalled, oldest on the left");
      draw(canvases[r], r, n);
    }
    status.textContent = n + " pairs in a " + data.d + " x " + data.d + " state: " +
      parts.join("; ") + ".";
  }

  slider.addEventListener("input", show);
  window.addEventListener("resize", show);
  show();
})(document.getElementById("__RECALLX_ID__"));
