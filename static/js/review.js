// The review page: keyboard-first marking. Every key has a mouse twin; the server does the saving.
//
// Keys are registered with DocketKeys (keys.js), which also lists them in the help panel; another
// panel on this page adds its own keys the same way. j/k move between verdicts in page order (the
// ones citing a turn, in transcript order, then the whole-call list; the pane holding the current
// one scrolls to it), r/w mark the current one right/wrong, e edits the note of a wrong mark,
// a marks the rest right (every unflagged verdict not yet marked, once the flagged ones are),
// u undoes the last mark or bulk action, space plays or pauses, i files an issue row on the
// current turn, n finishes the call, ? shows the keys, Esc leaves a field.
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
    if (!pane) {
      // On a phone the recording and the progress bar stick to the screen's edges: not room to read in.
      var player = document.querySelector(".review .player");
      var progress = document.getElementById("call-progress");
      if (player && getComputedStyle(player).position === "sticky") top = Math.max(top, player.getBoundingClientRect().bottom + 6);
      if (progress && getComputedStyle(progress).position === "sticky") bottom = Math.min(bottom, progress.getBoundingClientRect().top - 6);
    }
    var row = el.closest(".turn-row");
    var target = el;
    if (row && row.getBoundingClientRect().height <= bottom - top) target = row;
    var r = target.getBoundingClientRect();
    if (r.top >= top && r.bottom <= bottom) return;
    var room = bottom - top, delta;
    if (r.height > room) delta = r.top - top; // too tall: its top at the top
    else if (target === el && row) delta = r.bottom - bottom; // the verdict low, its turn above it
    else if (r.height > room / 2) delta = r.top < top ? r.top - top : r.bottom - bottom; // nearest
    else delta = (r.top + r.bottom) / 2 - (top + bottom) / 2; // centred in the free room
    (pane || window).scrollBy(0, delta);
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
    if (last.bulk) {
      htmx.ajax("POST", root.getAttribute("data-unmark-many-url"), {
        source: root, target: "#call-verdicts", swap: "none", values: { verdict: last.bulk },
      });
      return;
    }
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
    if (turnInput && turn !== undefined && turn !== null && turn !== "") turnInput.value = turn;
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

  function unmarkedFlagged() {
    return verdicts().filter(function (v) {
      return v.classList.contains("unmarked") && v.classList.contains("is-flagged");
    });
  }

  // The bulk button follows the page: disabled while a flagged verdict waits for a mark.
  function updateRest() {
    var button = document.getElementById("mark-rest");
    if (!button) return;
    var flagged = unmarkedFlagged().length;
    var clean = verdicts().filter(function (v) {
      return v.classList.contains("unmarked") && v.classList.contains("is-clean");
    }).length;
    button.disabled = flagged > 0 || clean === 0;
    var n = button.querySelector(".n");
    if (n) n.textContent = "(" + clean + ")";
    var why = document.getElementById("mark-rest-why");
    if (why && flagged) why.textContent = "Mark the " + flagged + " flagged first.";
    else if (why && !clean) why.textContent = "Nothing left to mark.";
    else if (why) why.textContent = "Every unflagged check you have not marked. a, undo u.";
  }

  function markRest() {
    var flagged = unmarkedFlagged();
    if (flagged.length) {
      flash("Mark the " + flagged.length + " flagged verdict" + (flagged.length > 1 ? "s" : "") + " first.");
      setCurrent(flagged[0]);
      return;
    }
    var button = document.getElementById("mark-rest");
    if (!button || button.disabled) { flash("Nothing left to mark."); return; }
    document.getElementById("mark-rest-form").requestSubmit(button);
  }

  function markKey(kind) {
    return function () {
      var el = current() || firstUnmarked();
      if (!el) return;
      setCurrent(el); // never mark a verdict the reviewer cannot see
      press(el, kind);
      if (kind === "right") { var next = nextAfter(el); if (next) setCurrent(next); }
    };
  }

  // A range of the recording for the issue form: from a drag on the timeline or from [ and ].
  function clock(ms) {
    var s = ms / 1000, m = Math.floor(s / 60), rest = s - m * 60;
    var sec = (Math.round(rest * 10) / 10).toFixed(1).replace(/\.0$/, "");
    return m + ":" + (rest < 10 ? "0" : "") + sec;
  }
  function clockMs(text) {
    if (!text) return null;
    var parts = text.split(":").map(parseFloat), s = 0;
    for (var i = 0; i < parts.length; i++) s = s * 60 + parts[i];
    return isNaN(s) ? null : Math.round(s * 1000);
  }
  function setRangeEnd(which, ms) {
    var input = document.getElementById(which === "from" ? "issue-from" : "issue-to");
    if (!input) { flash("No recording for this call."); return; }
    input.value = clock(ms);
    var from = clockMs(document.getElementById("issue-from").value);
    var to = clockMs(document.getElementById("issue-to").value);
    if (window.DocketTimeline) window.DocketTimeline.show(from, to);
    return { from: from, to: to };
  }
  document.addEventListener("timeline-range", function (ev) {
    setRangeEnd("from", ev.detail.startMs);
    setRangeEnd("to", ev.detail.endMs);
    flash("Range " + clock(ev.detail.startMs) + "–" + clock(ev.detail.endMs) + ": say what happened.");
    openIssue(null);
  });
  document.addEventListener("input", function (ev) {
    if (!ev.target.closest || !ev.target.closest(".range-fields") || !window.DocketTimeline) return;
    window.DocketTimeline.show(clockMs(document.getElementById("issue-from").value), clockMs(document.getElementById("issue-to").value));
  });
  function rangeKey(which) {
    return function () {
      var a = window.DocketPlayer && window.DocketPlayer.audio();
      if (!a) { flash("No recording for this call."); return; }
      setRangeEnd(which, a.currentTime * 1000);
      flash((which === "from" ? "From " : "To ") + clock(a.currentTime * 1000) + " (issue row range).");
    };
  }

  var K = window.DocketKeys;
  K.register("j", { also: ["k"], help: "next / previous verdict (the turns' first, then the whole call's)", order: 10,
    run: function () { move(1); }, runAlso: { k: function () { move(-1); } } });
  K.register("r", { help: "mark right (and move on)", order: 20, run: markKey("right") });
  K.register("w", { help: "mark wrong (then type a note if you like)", order: 30, run: markKey("wrong") });
  K.register("e", { help: "write a note on a wrong mark (Enter saves)", order: 40, run: function () {
    var el = current();
    var note = el && el.querySelector(".note-form input[name=note]");
    if (note) note.focus(); else flash("Mark the verdict wrong (w) to add a note.");
  } });
  K.register("a", { help: "mark the rest right: every unflagged verdict you have not marked", order: 50, run: markRest });
  K.register("u", { help: "undo the last mark (or the last mark-the-rest)", order: 60, run: undo });
  K.register(" ", { label: "space", help: "play / pause", order: 70, run: function (ev) {
    if (ev.target.closest && ev.target.closest("button, summary, a")) return false; // let them activate
    if (window.DocketPlayer && window.DocketPlayer.audio()) window.DocketPlayer.toggle();
    else flash("No recording for this call.");
  } });
  K.register("[", { also: ["]"], help: "start / end an issue row's range at the playing moment", order: 75,
    run: rangeKey("from"), runAlso: { "]": rangeKey("to") } });
  K.register("i", { help: "file an issue row on this turn", order: 80, run: function () { openIssue(activeTurn()); } });
  K.register("n", { help: "finish the call, open the next", order: 90, run: finish });
  K.register("?", { help: "show these keys", order: 100, run: toggleKeys });
  K.register("Escape", { label: "Esc", help: "leave a text field", order: 110, run: null });
  K.onEscape(function () { var c = current(); if (c) c.focus({ preventScroll: true }); });

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
    updateRest();
  });

  // A bulk action answers with the verdicts it changed (swapped out of band) and this event.
  document.body.addEventListener("marks-changed", function (ev) {
    var d = ev.detail || {};
    if (d.undo && d.undo.length) {
      undoStack.push({ bulk: d.undo });
      var el = current();
      var next = firstUnmarked();
      if (next && (!el || !el.classList.contains("unmarked"))) setCurrent(next);
    }
    if (d.flash) flash(d.flash);
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
    if (ev.detail && ev.detail.failed && ev.detail.elt && ev.detail.elt.id === "mark-rest-form") {
      flash(ev.detail.xhr && ev.detail.xhr.status === 400 ? ev.detail.xhr.responseText : "Not saved. Try again.");
      return;
    }
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

  // Open on the first verdict to mark, in view, so the first r marks what the reviewer sees.
  var start = firstUnmarked() || verdicts()[0];
  if (start) setCurrent(start);
  updateRest();
})();
