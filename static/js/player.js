// Docket's audio player: ties an <audio data-player> to the transcript's turns.
//
// Markup contract (shared by the call page and the review page):
//   <audio id="player" data-player src="..." preload="metadata" controls></audio>
//   <button type="button" data-speed="1" aria-pressed="true">1×</button>  (also 1.25, 1.5, 2)
//   <li class="turn" id="turn-7" data-start-ms="41200" data-end-ms="45800" tabindex="0">...</li>
//
// - Clicking a turn (not a link, button, summary or form field inside it), or Enter on a focused
//   turn, seeks to its start and plays.
// - While playing, the turn being spoken gets class "speaking" and aria-current="true", and is
//   scrolled into view gently (not while the user has just scrolled by hand).
// - Speed buttons set playbackRate; the active one has aria-pressed="true"; the choice is kept.
// - On load, ?turn=N or #turn-N cues the audio to that turn's start and marks the turn "cued".
// - Without an <audio data-player> the page is text only: ?turn=N still marks and scrolls to the turn.
// - Works after htmx swaps: handlers are delegated and `htmx:load` re-runs the setup.
// - window.DocketPlayer exposes seekToTurn(index, play), toggle(), audio() for other scripts.
(function () {
  "use strict";

  var RATE_KEY = "docket.playbackRate";
  var IGNORE = "a, button, summary, input, textarea, select, label, [data-no-seek]";
  var lastManualScroll = 0;
  var current = null;
  var turnsCache = null;

  function audio() {
    return document.querySelector("audio[data-player]");
  }

  function turns() {
    if (turnsCache) return turnsCache;
    var list = [];
    document.querySelectorAll(".turn[data-start-ms]").forEach(function (el) {
      var start = parseInt(el.getAttribute("data-start-ms"), 10);
      if (isNaN(start)) return;
      var end = parseInt(el.getAttribute("data-end-ms"), 10);
      list.push({ el: el, start: start, end: isNaN(end) ? null : end });
    });
    list.sort(function (a, b) { return a.start - b.start; });
    turnsCache = list;
    return list;
  }

  function turnAt(ms) {
    var list = turns();
    var lo = 0, hi = list.length - 1, found = -1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (list[mid].start <= ms) { found = mid; lo = mid + 1; } else { hi = mid - 1; }
    }
    if (found < 0) return null;
    var t = list[found];
    var next = list[found + 1];
    var end = t.end !== null ? t.end : (next ? next.start : Infinity);
    return ms < end ? t.el : null;
  }

  function reducedMotion() {
    return window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  }

  function reveal(el, force) {
    if (!el) return;
    if (!force && Date.now() - lastManualScroll < 4000) return;
    var r = el.getBoundingClientRect();
    var vh = window.innerHeight || document.documentElement.clientHeight;
    if (!force && r.top >= 60 && r.bottom <= vh - 40) return;
    el.scrollIntoView({ block: force ? "center" : "nearest", behavior: reducedMotion() ? "auto" : "smooth" });
  }

  function setSpeaking(el) {
    if (el === current) return;
    if (current) {
      current.classList.remove("speaking");
      current.removeAttribute("aria-current");
    }
    current = el;
    if (el) {
      el.classList.add("speaking");
      el.setAttribute("aria-current", "true");
      reveal(el, false);
    }
  }

  function whenReady(a, fn) {
    if (a.readyState >= 1) { fn(); return; }
    a.addEventListener("loadedmetadata", function once() {
      a.removeEventListener("loadedmetadata", once);
      fn();
    });
    if (a.preload === "none") a.load();
  }

  function seekToTurn(el, play) {
    var a = audio();
    if (typeof el === "number" || typeof el === "string") el = document.getElementById("turn-" + el);
    if (!a || !el) return false;
    var start = parseInt(el.getAttribute("data-start-ms"), 10);
    if (isNaN(start)) return false;
    whenReady(a, function () {
      a.currentTime = start / 1000;
      if (play) {
        var p = a.play();
        if (p && p.catch) p.catch(function () { /* autoplay refused: the cue stays */ });
      }
    });
    setSpeaking(el);
    return true;
  }

  function applyRate(rate) {
    var a = audio();
    if (a && rate > 0) {
      a.defaultPlaybackRate = rate;
      a.playbackRate = rate;
    }
    document.querySelectorAll("[data-speed]").forEach(function (b) {
      b.setAttribute("aria-pressed", parseFloat(b.getAttribute("data-speed")) === rate ? "true" : "false");
    });
  }

  function storedRate() {
    try {
      var r = parseFloat(window.localStorage.getItem(RATE_KEY));
      return r > 0 ? r : 1;
    } catch (e) {
      return 1;
    }
  }

  function cueFromLocation() {
    var n = new URLSearchParams(window.location.search).get("turn");
    var m = /^#turn-(\d+)$/.exec(window.location.hash);
    if (n === null && m) n = m[1];
    if (n === null || !/^\d+$/.test(n)) return;
    var el = document.getElementById("turn-" + n);
    if (!el) return;
    document.querySelectorAll(".turn.cued").forEach(function (t) { t.classList.remove("cued"); });
    el.classList.add("cued");
    var a = audio();
    if (a) {
      var start = parseInt(el.getAttribute("data-start-ms"), 10);
      if (!isNaN(start)) whenReady(a, function () { a.currentTime = start / 1000; });
    }
    reveal(el, true);
  }

  function bindAudio() {
    var a = audio();
    if (!a || a.dataset.playerBound) return;
    a.dataset.playerBound = "1";
    var tick = function () { setSpeaking(turnAt(a.currentTime * 1000)); };
    a.addEventListener("timeupdate", function () { if (!a.paused) tick(); });
    a.addEventListener("seeked", tick);
    a.addEventListener("play", tick);
    a.addEventListener("ended", function () { setSpeaking(null); });
    a.addEventListener("loadedmetadata", function () { applyRate(storedRate()); });
  }

  function setup() {
    turnsCache = null;
    current = document.querySelector(".turn.speaking");
    bindAudio();
    applyRate(storedRate());
    cueFromLocation();
  }

  document.addEventListener("click", function (ev) {
    var speed = ev.target.closest("[data-speed]");
    if (speed) {
      var rate = parseFloat(speed.getAttribute("data-speed"));
      try { window.localStorage.setItem(RATE_KEY, String(rate)); } catch (e) { /* private mode */ }
      applyRate(rate);
      return;
    }
    var turn = ev.target.closest(".turn");
    if (!turn || !audio() || ev.target.closest(IGNORE)) return;
    var sel = window.getSelection && window.getSelection();
    if (sel && !sel.isCollapsed && turn.contains(sel.anchorNode)) return; // selecting text, not seeking
    seekToTurn(turn, true);
  });

  document.addEventListener("keydown", function (ev) {
    if (ev.key !== "Enter" || !ev.target.classList || !ev.target.classList.contains("turn")) return;
    if (seekToTurn(ev.target, true)) ev.preventDefault();
  });

  ["wheel", "touchmove"].forEach(function (name) {
    window.addEventListener(name, function () { lastManualScroll = Date.now(); }, { passive: true });
  });

  window.addEventListener("hashchange", cueFromLocation);
  document.addEventListener("htmx:load", function (ev) {
    // Only a swap that brings turns or a player changes what we track; a new player means a new call.
    var el = ev.target;
    if (!el || !el.querySelector) return;
    var newPlayer = el.matches("audio[data-player]") || el.querySelector("audio[data-player]");
    if (!newPlayer && !el.matches(".turn") && !el.querySelector(".turn")) return;
    turnsCache = null;
    if (newPlayer) setup();
  });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }

  window.DocketPlayer = {
    audio: audio,
    seekToTurn: seekToTurn,
    toggle: function () {
      var a = audio();
      if (!a) return;
      if (a.paused) { var p = a.play(); if (p && p.catch) p.catch(function () {}); } else { a.pause(); }
    },
  };
})();
