// The review page: keyboard-first marking. Every key has a mouse twin; the server does the saving.
//
// j/k move between verdicts in page order (the ones citing a turn, in transcript order, then the
// whole-call list; the pane holding the current one scrolls to it), r/w mark the current one
// right/wrong, e edits the note of a wrong mark, u undoes the last mark, space plays or pauses,
// i files an issue row on the current turn, n finishes the call, ? shows the keys, Esc leaves a field.
// A mark pressed while the previous save of the same verdict is still in flight waits for it,
// so the last press always wins; a failed save is shown on the verdict and blocks leaving the page.
(function () {
  "use strict";

  var root = document.querySelector("[data-review]");
  if (!root) return;
  // Settling "style" writes a style attribute, which the CSP (no inline styles) refuses; nothing here needs it.
  if (window.htmx) htmx.config.attributesToSettle = ["class", "width", "height"];

  var currentId = null;
  var undoStack = [];
  var pendingAction = {}; // verdict id -> "right" | "wrong" waiting for an in-flight save

  function verdicts() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-verdict]"));
  }
  function byId(id) {
    return document.getElementById("verdict-" + id);
  }
  function current() {
    return currentId ? byId(currentId) : null;
  }
  function markable(el) {
    return el && el.querySelector(".mark-form");
  }
  function flash(text) {
    var f = document.getElementById("review-flash");
    if (!f) return;
    f.textContent = text;
    f.classList.add("show");
    clearTimeout(flash.t);
    flash.t = setTimeout(function () { f.classList.remove("show"); }, 2600);
  }

  function setCurrent(el, opts) {
    opts = opts || {};
    verdicts().forEach(function (v) { v.classList.remove("is-current"); });
    if (!el) { currentId = null; return; }
    currentId = el.getAttribute("data-verdict");
    el.classList.add("is-current");
    if (opts.focus !== false) el.focus({ preventScroll: true });
    if (opts.scroll !== false) reveal(el);
  }

  // The pane that scrolls this element: the transcript or the whole-call list on a wide screen,
  // the page itself (null) when the layout falls back to one column.
  function scroller(el) {
    var pane = el.closest(".pane");
    return pane && pane.scrollHeight > pane.clientHeight && getComputedStyle(pane).overflowY !== "visible" ? pane : null;
  }

  // Bring a verdict into view inside its own pane; for a verdict citing a turn, bring the turn with it
  // (the whole row when it fits, else as much of the turn as fits above the verdict).
  function reveal(el) {
    var pane = scroller(el);
    var vh = window.innerHeight || document.documentElement.clientHeight;
    var box = pane ? pane.getBoundingClientRect() : { top: 0, bottom: vh };
    var head = pane && pane.querySelector(".pane-head");
    var top = box.top + (head ? head.offsetHeight : 0) + 6, bottom = box.bottom - 6;
    var row = el.closest(".turn-row");
    var target = el;
    if (row && row.getBoundingClientRect().height <= bottom - top) target = row;
    var r = target.getBoundingClientRect();
    if (r.top >= top && r.bottom <= bottom) return;
    if (target === row || !row) target.scrollIntoView({ block: r.height > (bottom - top) / 2 ? "nearest" : "center" });
    else el.scrollIntoView({ block: "end" });
  }

  function move(step) {
    var list = verdicts();
    if (!list.length) return;
    var i = list.indexOf(current());
    var next = i < 0 ? (step > 0 ? 0 : list.length - 1) : Math.min(list.length - 1, Math.max(0, i + step));
    setCurrent(list[next]);
  }

  function firstUnmarked() {
    return verdicts().filter(function (v) { return v.classList.contains("unmarked"); })[0] || null;
  }

  function nextAfter(el) {
    var list = verdicts();
    var i = list.indexOf(el);
    return i >= 0 && i + 1 < list.length ? list[i + 1] : null;
  }

  function busy(el) {
    var form = el && el.querySelector(".mark-form");
    return !!(form && form.classList.contains("htmx-request"));
  }

  // Every mark, by key or mouse, goes through a click on the verdict's Right or Wrong button.
  function press(el, kind) {
    if (!markable(el)) { flash("This verdict errored; it needs no mark."); return; }
    var button = el.querySelector(kind === "right" ? ".mark-right" : ".mark-wrong");
    if (button) button.click();
  }

  document.addEventListener("click", function (ev) {
    var button = ev.target.closest(".mark-right, .mark-wrong");
    if (!button) {
      var v = ev.target.closest("[data-verdict]");
      if (v && !ev.target.closest("a, input, textarea")) setCurrent(v, { scroll: false, focus: !ev.target.closest("button") });
      var here = ev.target.closest(".issue-here");
      if (here) { ev.preventDefault(); openIssue(here.getAttribute("data-turn")); }
      return;
    }
    var el = button.closest("[data-verdict]");
    var kind = button.classList.contains("mark-right") ? "right" : "wrong";
    var id = el.getAttribute("data-verdict");
    if (id !== currentId) setCurrent(el, { scroll: false, focus: false });
    if (busy(el)) {
      ev.preventDefault(); // the earlier save is still on its way: send this one after it
      pendingAction[id] = kind;
      return;
    }
    undoStack.push({ id: id, prev: el.getAttribute("data-mark") || null, note: el.getAttribute("data-note") || "" });
    if (undoStack.length > 200) undoStack.shift();
  }, true);

  function undo() {
    var last = undoStack.pop();
    if (!last) { flash("Nothing to undo."); return; }
    var el = byId(last.id);
    if (!el) return;
    setCurrent(el);
    var url, values = {};
    if (last.prev === null) {
      url = el.getAttribute("data-unmark-url");
    } else {
      url = el.getAttribute("data-mark-url");
      values = { correct: last.prev === "right" ? "1" : "0", note: last.note };
    }
    htmx.ajax("POST", url, { target: "#verdict-" + last.id, swap: "outerHTML", values: values });
    flash(last.prev === null ? "Mark undone." : "Mark set back to " + last.prev + ".");
  }

  function activeTurn() {
    var el = current();
    var t = el && el.getAttribute("data-turn");
    if (t) return t;
    var speaking = document.querySelector(".turn.speaking, .turn.cued");
    if (speaking) return speaking.getAttribute("data-index");
    var focused = document.activeElement && document.activeElement.closest && document.activeElement.closest(".turn");
    return focused ? focused.getAttribute("data-index") : "";
  }

  function openIssue(turn) {
    var turnInput = document.getElementById("issue-turn");
    var what = document.getElementById("issue-what");
    if (!what) return;
    if (turnInput && turn !== undefined && turn !== null) turnInput.value = turn;
    what.scrollIntoView({ block: "nearest" });
    what.focus();
  }

  function finish() {
    var finishButton = document.getElementById("finish");
    if (finishButton && !finishButton.disabled) {
      document.getElementById("finish-form").requestSubmit(finishButton);
      return;
    }
    var nextButton = document.querySelector("[data-key=n]");
    if (nextButton) { nextButton.click(); return; }
    var left = verdicts().filter(function (v) { return v.classList.contains("unmarked"); }).length;
    if (left) {
      flash("Mark every verdict first: " + left + " left.");
      setCurrent(firstUnmarked());
    } else {
      flash("Saving… press n again in a moment.");
    }
  }

  function toggleKeys() {
    var keys = document.getElementById("keys-help");
    if (!keys) return;
    keys.open = !keys.open;
    if (keys.open) keys.scrollIntoView({ block: "nearest" });
  }

  function typing(target) {
    if (!target || !target.closest) return false;
    return !!target.closest("input, textarea, select, [contenteditable=true]");
  }

  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (typing(ev.target)) {
      if (ev.key === "Escape") { ev.target.blur(); var c = current(); if (c) c.focus({ preventScroll: true }); }
      return;
    }
    var el = current();
    switch (ev.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "r":
        el = el || firstUnmarked();
        if (!el) return;
        setCurrent(el, { scroll: false });
        press(el, "right");
        var next = nextAfter(el);
        if (next) setCurrent(next);
        break;
      case "w":
        el = el || firstUnmarked();
        if (!el) return;
        setCurrent(el, { scroll: false });
        press(el, "wrong");
        break;
      case "e":
        var note = el && el.querySelector(".note-form input[name=note]");
        if (note) note.focus(); else flash("Mark the verdict wrong (w) to add a note.");
        break;
      case "u": undo(); break;
      case " ":
        if (ev.target.closest && ev.target.closest("button, summary, a")) return; // let them activate
        if (window.DocketPlayer && window.DocketPlayer.audio()) window.DocketPlayer.toggle();
        else flash("No recording for this call.");
        break;
      case "i": openIssue(activeTurn()); break;
      case "n": finish(); break;
      case "?": toggleKeys(); break;
      default: return;
    }
    ev.preventDefault();
  });

  function swappedVerdict(ev) {
    var el = ev.detail && ev.detail.target;
    var fresh = el && el.id && el.id.indexOf("verdict-") === 0 ? byId(el.id.slice(8)) : null;
    if (!fresh) {
      fresh = ev.target && ev.target.matches && ev.target.matches("[data-verdict]") ? ev.target : null;
    }
    return fresh;
  }

  // After a verdict comes back from the server: keep it current.
  document.addEventListener("htmx:afterSwap", function (ev) {
    var fresh = swappedVerdict(ev);
    if (!fresh || fresh.getAttribute("data-verdict") !== currentId) return;
    fresh.classList.add("is-current");
    if (!document.activeElement || document.activeElement === document.body) fresh.focus({ preventScroll: true });
  });

  // htmx wires a swapped verdict's forms only when it settles: a press sent before that would be
  // a plain form post (a full page load, no "Saved"). So the press that waited goes out here.
  document.addEventListener("htmx:afterSettle", function (ev) {
    var el = current();
    if (el && !el.classList.contains("is-current")) el.classList.add("is-current");
    var fresh = swappedVerdict(ev);
    var id = fresh && fresh.getAttribute("data-verdict");
    if (id && pendingAction[id]) {
      var kind = pendingAction[id];
      delete pendingAction[id];
      press(fresh, kind);
    }
  });

  // A lapsed session answers with the login page: never swap that in; keep the verdict as it was.
  document.addEventListener("htmx:beforeSwap", function (ev) {
    var url = ev.detail.xhr && ev.detail.xhr.responseURL;
    var login = root.getAttribute("data-login-url");
    if (!url || !login || new URL(url).pathname !== login) return;
    ev.detail.shouldSwap = false;
    var v = ev.detail.target && ev.detail.target.closest && ev.detail.target.closest("[data-verdict]");
    if (v) {
      v.classList.add("unsaved");
      var state = v.querySelector(".mark-state");
      if (state) state.textContent = "Not saved: you are logged out.";
    }
    flash("You are logged out. Log in again in a new tab, then mark again.");
  });

  document.addEventListener("htmx:afterRequest", function (ev) {
    if (ev.detail && ev.detail.failed) {
      var v = ev.detail.elt && ev.detail.elt.closest && ev.detail.elt.closest("[data-verdict]");
      if (!v && ev.detail.target && ev.detail.target.matches && ev.detail.target.matches("[data-verdict]")) v = ev.detail.target;
      if (v) {
        v.classList.add("unsaved");
        var state = v.querySelector(".mark-state");
        if (state) state.textContent = "Not saved. Check the connection and mark again.";
      }
      flash("Not saved. Check the connection and try again.");
    }
  });

  document.body.addEventListener("issue-filed", function (ev) {
    var n = ev.detail && ev.detail.number;
    flash(n ? "Filed row " + n + "." : "Filed.");
  });

  // Leaving while a mark is still on its way, a save failed, or an issue row is typed but not filed: ask first.
  window.addEventListener("beforeunload", function (ev) {
    var saving = document.querySelector(".mark-form.htmx-request, .note-form.htmx-request, #issue-form.htmx-request");
    var unsaved = document.querySelector("[data-verdict].unsaved");
    var what = document.getElementById("issue-what");
    if (saving || unsaved || (what && what.value.trim())) { ev.preventDefault(); ev.returnValue = ""; }
  });

  var start = firstUnmarked() || verdicts()[0];
  if (start) setCurrent(start, { scroll: false });
})();
