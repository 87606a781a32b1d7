// Hover: every element with data-tip shows its text; heat maps show the value of the cell under
// the pointer (values travel as base64 bytes, 0..200 = 0..100 %, 255 = no sample). No network.
(function () {
  "use strict";
  var tip = document.getElementById("tip");
  function show(text, ev) {
    tip.textContent = text;
    tip.hidden = false;
    var x = ev.clientX + 14, y = ev.clientY + 14;
    var r = tip.getBoundingClientRect();
    if (x + r.width > window.innerWidth - 4) { x = ev.clientX - r.width - 10; }
    if (y + r.height > window.innerHeight - 4) { y = ev.clientY - r.height - 10; }
    tip.style.left = Math.max(0, x) + "px";
    tip.style.top = Math.max(0, y) + "px";
  }
  function hide() { tip.hidden = true; }
  var cache = new WeakMap();
  function heatData(el) {
    var d = cache.get(el);
    if (!d) {
      var raw = atob(el.getAttribute("data-values"));
      var bytes = new Uint8Array(raw.length);
      for (var i = 0; i < raw.length; i++) { bytes[i] = raw.charCodeAt(i); }
      d = { v: bytes, rows: +el.getAttribute("data-rows"), cols: +el.getAttribute("data-cols"),
            rl: el.getAttribute("data-row-labels").split("|"), cl: el.getAttribute("data-col-labels").split("|") };
      cache.set(el, d);
    }
    return d;
  }
  function heatText(el, ev) {
    var img = el.querySelector("image");
    var box = img.getBoundingClientRect();
    var d = heatData(el);
    var c = Math.floor((ev.clientX - box.left) / box.width * d.cols);
    var r = Math.floor((ev.clientY - box.top) / box.height * d.rows);
    if (c < 0 || r < 0 || c >= d.cols || r >= d.rows) { return null; }
    var q = d.v[r * d.cols + c];
    var value = q === 255 ? "no sample" : (q / 2).toFixed(1) + " %";
    return el.getAttribute("data-vertex") + " · subtask " + d.rl[r] + " · " + d.cl[c] + " · " +
      el.getAttribute("data-label") + " " + value;
  }
  document.addEventListener("mousemove", function (ev) {
    var t = ev.target;
    var heat = t.closest ? t.closest("[data-values]") : null;
    if (heat) {
      var text = heatText(heat, ev);
      if (text) { show(text, ev); return; }
    }
    var el = t.closest ? t.closest("[data-tip]") : null;
    if (el) { show(el.getAttribute("data-tip"), ev); } else { hide(); }
  });
  document.addEventListener("mouseleave", hide);
  window.addEventListener("scroll", hide, { passive: true });
})();
