// The review page's timeline: who speaks when, drawn by the server as an SVG under the player
// (agent turns above, user turns below, so talk-over shows as both lanes filled at once).
//
// - Click (or tap) plays from that moment; drag picks a range of the recording, shown shaded, and
//   announced as a "timeline-range" event ({startMs, endMs}) that the issue form listens for.
// - The playhead follows the audio.
// - window.DocketTimeline.show(startMs, endMs) shades a range picked another way (keys, typing).
(function () {
  "use strict";

  var box = document.querySelector("[data-timeline]");
  if (!box) return;
  var svg = box.querySelector("svg");
  var range = svg.querySelector(".tl-range");
  var head = svg.querySelector(".tl-head");
  var duration = parseInt(box.getAttribute("data-duration-ms"), 10) || 1;

  function audio() {
    return document.querySelector("audio[data-player]");
  }

  function msAt(clientX) {
    var r = svg.getBoundingClientRect();
    var f = r.width ? (clientX - r.left) / r.width : 0;
    return Math.round(Math.min(1, Math.max(0, f)) * duration);
  }

  function show(a, b) {
    if (a === null || b === null || isNaN(a) || isNaN(b) || b <= a) {
      range.classList.remove("is-set");
      return;
    }
    range.setAttribute("x", String(a));
    range.setAttribute("width", String(b - a));
    range.classList.add("is-set");
  }

  var start = null;
  var moved = false;
  svg.addEventListener("pointerdown", function (ev) {
    if (ev.button !== 0) return;
    start = msAt(ev.clientX);
    moved = false;
    svg.setPointerCapture(ev.pointerId);
    ev.preventDefault();
  });
  svg.addEventListener("pointermove", function (ev) {
    if (start === null) return;
    var now = msAt(ev.clientX);
    if (Math.abs(now - start) > duration / 150) moved = true;
    if (moved) show(Math.min(start, now), Math.max(start, now));
  });
  svg.addEventListener("pointerup", function (ev) {
    if (start === null) return;
    var now = msAt(ev.clientX);
    var from = Math.min(start, now), to = Math.max(start, now);
    start = null;
    if (moved) {
      show(from, to);
      document.dispatchEvent(new CustomEvent("timeline-range", { detail: { startMs: from, endMs: to } }));
      return;
    }
    var a = audio();
    if (!a) return;
    a.currentTime = from / 1000;
    var p = a.play();
    if (p && p.catch) p.catch(function () { /* autoplay refused: the cue stays */ });
  });
  svg.addEventListener("pointercancel", function () { start = null; });

  var a = audio();
  if (a) {
    var tick = function () {
      var x = String(Math.round(a.currentTime * 1000));
      head.setAttribute("x1", x);
      head.setAttribute("x2", x);
    };
    a.addEventListener("timeupdate", tick);
    a.addEventListener("seeked", tick);
  }

  window.DocketTimeline = { show: show };
})();
