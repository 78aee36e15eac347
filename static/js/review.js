// The review page: keyboard-first marking. Every key has a mouse twin; the server does the saving.
//
// Keys are registered with DocketKeys (keys.js), which also lists them in the help panel; another
// panel on this page adds its own keys the same way. j/k move between verdicts in page order (the
// ones citing a turn, in transcript order, then the whole-call list; the pane holding the current
// one scrolls to it), r/w say the judge is right/wrong on the current one, e edits the note of a
// "judge wrong" mark, a says the judge is right on the rest (every unflagged verdict not yet
// marked, once the flagged ones are), u undoes the last mark or bulk action, space plays or
// pauses, i files an issue row on the current turn, n finishes the call, ? shows the keys, Esc
// leaves a field.
//
// One change at a time goes to the server, and the page shows what the server answers:
// - Every change (a mark, a note, an undo, the rest, finish, skip) waits its turn in one queue,
//   and so does every key pressed while a change is on its way (DocketKeys.hold). A held key runs
//   when its turn comes, against the verdicts as the server returned them; one that lands in a
//   text field by then (the note `e` opened) is typed into it, never run as a shortcut.
// - Each change sends the version of the call the page holds (#call-progress data-version) and
//   gets back the verdicts it changed and the progress, with the next version. A change the server
//   refuses because the call changed elsewhere (another tab finished it, or marked) answers 409
//   with every verdict as saved: the page shows them, says so, and runs none of the keys held
//   after it (it says how many).
// - Coming back (the back-forward cache, a reconnect, a tab shown again) asks the server whether
//   the call changed and shows what it holds; the page itself is never cached (no-store).
// A failed save is shown on the verdict and blocks leaving the page.
(function () {
  "use strict";

  var root = document.querySelector("[data-review]");
  if (!root) return;
  // Settling "style" writes a style attribute, which the CSP (no inline styles) refuses; nothing here needs it.
  if (window.htmx) htmx.config.attributesToSettle = ["class", "width", "height"];

  // Restored from the back-forward cache, the page shows what was on screen when the reviewer left
  // (before a finish, or another tab's marks): load it again from the server.
  window.addEventListener("pageshow", function (ev) { if (ev.persisted) window.location.reload(); });

  var K = window.DocketKeys;
  var currentId = null;
  var undoStack = [];
  var queue = []; // work waiting its turn: held keys and pressed buttons, in the order they came
  var inFlight = false; // a change is on its way to the server
  var running = false; // a queued job is running now: what it starts runs now, not at the back
  var leaving = false; // finish, skip or next call was sent: the page is going away
  var syncing = false; // what is on its way only asks whether the call changed

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
  function progress() {
    return document.getElementById("call-progress");
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

  function unmarked() {
    return verdicts().filter(function (v) { return v.classList.contains("unmarked"); });
  }
  function firstUnmarked() {
    return unmarked()[0] || null;
  }
  function unmarkedFlagged() {
    return unmarked().filter(function (v) { return v.classList.contains("is-flagged"); });
  }

  function nextAfter(el) {
    var list = verdicts();
    var i = list.indexOf(el);
    return i >= 0 && i + 1 < list.length ? list[i + 1] : null;
  }

  // ---- The queue: one change on its way at a time; everything else waits its turn, in order.

  function busy() {
    return inFlight || (queue.length > 0 && !running);
  }
  function pump() {
    while (!inFlight && queue.length) {
      var job = queue.shift();
      running = true;
      try { job(); } finally { running = false; }
    }
  }
  // Run now when nothing is waiting, else after what is.
  function inTurn(job) {
    if (busy()) queue.push(job);
    else { running = true; try { job(); } finally { running = false; } }
  }

  // Keys pressed while a change is on its way wait for it (Shift, Tab and arrows stay the browser's).
  var HELD = { Enter: 1, Backspace: 1, Delete: 1, Escape: 1 };
  K.hold(function (ev) {
    if (leaving) return true;
    if (!busy() || (ev.key.length !== 1 && !HELD[ev.key])) return false;
    var key = ev.key;
    queue.push(function () { K.replay(key); });
    return true;
  });

  // Drop what waits after a refused or failed change; say how much, so nothing vanishes unsaid.
  function dropQueue() {
    var n = queue.length;
    queue = [];
    return n ? " " + n + " key" + (n > 1 ? "s" : "") + " pressed after it " + (n > 1 ? "were" : "was") + " not run." : "";
  }

  function version() {
    var p = progress();
    return p ? p.getAttribute("data-version") || "" : "";
  }
  function csrf() {
    var input = root.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  // Put the server's answer on the page: each top-level element replaces the one with its id.
  // A field the reviewer is typing in keeps its text and the focus.
  function swapIn(html) {
    var tpl = document.createElement("template");
    tpl.innerHTML = html;
    var active = document.activeElement;
    Array.prototype.slice.call(tpl.content.children).forEach(function (fresh) {
      var old = fresh.id && document.getElementById(fresh.id);
      if (!old) return;
      var typed = null, hadFocus = old === active;
      if (active && active !== old && old.contains(active) && active.name) {
        typed = { name: active.name, value: active.value };
      }
      old.replaceWith(fresh);
      if (fresh.matches("[data-verdict]") && fresh.getAttribute("data-verdict") === currentId) {
        fresh.classList.add("is-current");
      }
      if (typed) {
        var field = fresh.querySelector("[name='" + typed.name + "']:not([type=hidden])");
        if (field) { field.value = typed.value; field.focus({ preventScroll: true }); }
        else flash("That verdict changed while you typed: your text was not kept.");
      } else if (hadFocus) {
        fresh.focus({ preventScroll: true });
      }
    });
    updateRest();
  }

  function notice(text) {
    var p = progress();
    if (!p) { flash(text); return; }
    var n = document.getElementById("review-notice");
    if (!n) {
      n = document.createElement("p");
      n.id = "review-notice";
      n.className = "notice";
      n.setAttribute("role", "alert");
      p.insertBefore(n, p.firstChild);
    }
    n.textContent = text;
  }

  function showUnsaved(el, text) {
    if (!el) return;
    el.classList.add("unsaved");
    var state = el.querySelector(".mark-state");
    if (state) state.textContent = text;
  }

  // Send one change; its answer comes back before the next change goes.
  // opts: verdict (the element it changes), undo (what undoes it), bulkUndo (an undo of the rest).
  function send(url, values, opts) {
    opts = opts || {};
    inFlight = true;
    var body = new URLSearchParams();
    body.set("csrfmiddlewaretoken", csrf());
    body.set("version", version());
    Object.keys(values).forEach(function (k) {
      [].concat(values[k]).forEach(function (v) { body.append(k, v); });
    });
    var id = opts.verdict && opts.verdict.getAttribute("data-verdict");
    if (opts.verdict) opts.verdict.classList.add("saving");
    fetch(url, {
      method: "POST", body: body, credentials: "same-origin",
      headers: { "HX-Request": "true", "HX-Current-URL": window.location.href },
    }).then(function (r) {
      return r.text().then(function (text) { answered(r, text, opts, id); });
    }, function () {
      failed(id, "Not saved. Check the connection and mark again.");
    }).finally(function () {
      var el = id && byId(id);
      if (el) el.classList.remove("saving");
      inFlight = false;
      pump();
    });
  }

  function answered(r, text, opts, id) {
    var login = root.getAttribute("data-login-url");
    if (r.redirected && login && new URL(r.url).pathname === login) {
      showUnsaved(id && byId(id), "Not saved: you are logged out.");
      flash("You are logged out. Log in again in a new tab, then mark again." + dropQueue());
      return;
    }
    if (r.status === 409) { // the call changed elsewhere: the answer is the server's whole state
      swapIn(text);
      undoStack = [];
      var n = document.getElementById("review-notice");
      if (n) n.textContent += dropQueue();
      var el = current();
      if (el) el.focus({ preventScroll: true });
      return;
    }
    if (!r.ok) {
      failed(id, r.status < 500 && text && text.length < 400 ? text : "Not saved. Try again.");
      return;
    }
    swapIn(text);
    var fresh = id && byId(id);
    if (opts.undo && !(fresh && fresh.querySelector(".mark-state .error"))) {
      undoStack.push(opts.undo);
      if (undoStack.length > 200) undoStack.shift();
    }
    var trigger = r.headers.get("HX-Trigger");
    if (trigger) {
      try { marksChanged(JSON.parse(trigger)["marks-changed"] || {}); } catch (e) { /* not ours */ }
    }
  }

  function failed(id, text) {
    showUnsaved(id && byId(id), text);
    flash(text + dropQueue());
  }

  // A bulk action's answer: what undoes it, and what to say.
  function marksChanged(d) {
    if (d.undo && d.undo.length) {
      undoStack.push({ bulk: d.undo });
      var el = current();
      var next = firstUnmarked();
      if (next && (!el || !el.classList.contains("unmarked"))) setCurrent(next);
    }
    if (d.flash) flash(d.flash);
  }

  // Coming back to the page (a reconnect, the tab shown again): ask whether the call changed.
  function sync() {
    var p = progress();
    if (!p || leaving) return;
    inFlight = syncing = true;
    var url = p.getAttribute("data-progress-url") + "?version=" + encodeURIComponent(version());
    fetch(url, { credentials: "same-origin", headers: { "HX-Request": "true" } })
      .then(function (r) {
        return r.text().then(function (text) {
          if (!r.ok || r.redirected) return;
          swapIn(text);
          if (document.getElementById("review-notice")) undoStack = [];
        });
      }, function () { /* still offline: the next change or reconnect asks again */ })
      .finally(function () { inFlight = syncing = false; pump(); });
  }
  window.addEventListener("online", function () { inTurn(sync); });
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") inTurn(sync);
  });

  // ---- Marks.

  // The reviewer says the judge is right or wrong on a verdict.
  function mark(el, kind, note) {
    if (!markable(el)) { flash("This verdict errored; it needs no mark."); return; }
    var values = { correct: kind === "right" ? "1" : "0" };
    // Saying "judge wrong" again keeps the note it had.
    if (kind === "wrong") values.note = note !== undefined ? note : el.getAttribute("data-note") || "";
    var undo = { id: el.getAttribute("data-verdict"), prev: el.getAttribute("data-mark") || null, note: el.getAttribute("data-note") || "" };
    send(el.getAttribute("data-mark-url"), values, { verdict: el, undo: undo });
  }

  function undo() {
    var last = undoStack.pop();
    if (!last) { flash("Nothing to undo."); return; }
    if (last.bulk) {
      send(root.getAttribute("data-unmark-many-url"), { verdict: last.bulk }, {});
      return;
    }
    var el = byId(last.id);
    if (!el) return;
    setCurrent(el);
    if (last.prev === null) {
      send(el.getAttribute("data-unmark-url"), {}, { verdict: el });
      flash("Mark undone.");
    } else {
      send(el.getAttribute("data-mark-url"), { correct: last.prev === "right" ? "1" : "0", note: last.note }, { verdict: el });
      flash("Mark set back to judge " + last.prev + ".");
    }
  }

  // Mouse and keyboard meet here: a verdict's buttons, its note, the rest, finish and skip all
  // wait their turn behind a change on its way.
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    var el = form.closest("[data-verdict]");
    if (el && form.classList.contains("mark-form")) {
      ev.preventDefault();
      var id = el.getAttribute("data-verdict");
      var kind = ev.submitter && ev.submitter.classList.contains("mark-wrong") ? "wrong" : "right";
      inTurn(function () { var v = byId(id); if (v) mark(v, kind); });
    } else if (el && form.classList.contains("note-form")) {
      ev.preventDefault();
      var vid = el.getAttribute("data-verdict");
      var note = form.querySelector("input[name=note]").value;
      el.focus({ preventScroll: true }); // the note is said: the keys are shortcuts again
      inTurn(function () { var v = byId(vid); if (v) mark(v, "wrong", note); });
    } else if (form.id === "mark-rest-form") {
      ev.preventDefault();
      inTurn(markRest);
    } else if (progress() && progress().contains(form) && busy()) {
      ev.preventDefault(); // finish, skip or next call: after the change on its way
      inTurn(function () { leave(); form.submit(); });
    } else if (progress() && progress().contains(form)) {
      leave();
    }
  }, true);

  // The page is going away (finish, skip, next call): nothing more is sent from it.
  function leave() {
    leaving = true;
    inFlight = true;
    queue = [];
  }

  document.addEventListener("click", function (ev) {
    var button = ev.target.closest(".mark-right, .mark-wrong");
    if (button) {
      var el = button.closest("[data-verdict]");
      if (el.getAttribute("data-verdict") !== currentId) setCurrent(el, { scroll: false, focus: false });
      return;
    }
    var v = ev.target.closest("[data-verdict]");
    if (v && !ev.target.closest("a, input, textarea")) setCurrent(v, { scroll: false, focus: !ev.target.closest("button") });
    var here = ev.target.closest(".issue-here");
    if (here) { ev.preventDefault(); openIssue(here.getAttribute("data-turn")); }
  }, true);

  // A verdict that takes the focus (a click, Tab to its buttons, a link to it) is the current one.
  document.addEventListener("focusin", function (ev) {
    var v = ev.target.closest && ev.target.closest("[data-verdict]");
    if (v && v.getAttribute("data-verdict") !== currentId) setCurrent(v, { scroll: false, focus: false });
  });

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
      var form = document.getElementById("finish-form");
      leave();
      form.submit();
      return;
    }
    var nextButton = document.querySelector("[data-key=n]");
    if (nextButton) { leave(); nextButton.form.submit(); return; }
    var left = unmarked().length;
    flash(left ? "Mark every verdict first: " + left + " left." : "Nothing to finish.");
    if (left) setCurrent(firstUnmarked());
  }

  function toggleKeys() {
    var keys = document.getElementById("keys-help");
    if (!keys) return;
    keys.open = !keys.open;
    if (keys.open) keys.scrollIntoView({ block: "nearest" });
  }

  // The bulk button follows the page: disabled while a flagged verdict waits for a mark.
  function updateRest() {
    var button = document.getElementById("mark-rest");
    if (!button) return;
    var flagged = unmarkedFlagged().length;
    var clean = unmarked().filter(function (v) { return v.classList.contains("is-clean"); }).length;
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
    send(document.getElementById("mark-rest-form").getAttribute("action"), {}, {});
  }

  function markKey(kind) {
    return function () {
      var el = current() || firstUnmarked();
      if (!el) return;
      setCurrent(el); // never mark a verdict the reviewer cannot see
      mark(el, kind);
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

  K.register("j", { also: ["k"], help: "next / previous verdict (the turns' first, then the whole call's)", order: 10,
    run: function () { move(1); }, runAlso: { k: function () { move(-1); } } });
  K.register("r", { help: "the judge is right (Judge right), then the next verdict", order: 20, run: markKey("right") });
  K.register("w", { help: "the judge is wrong (Judge wrong); then e to say why", order: 30, run: markKey("wrong") });
  K.register("e", { help: "say why the judge is wrong: a note (Enter saves)", order: 40, run: function () {
    var el = current();
    var note = el && el.querySelector(".note-form input[name=note]");
    if (note) { note.focus(); note.setSelectionRange(note.value.length, note.value.length); }
    else flash("Mark the judge wrong (w) to add a note.");
  } });
  K.register("a", { help: "the judge is right on the rest: every unflagged verdict you have not marked", order: 50, run: markRest });
  K.register("u", { help: "undo the last mark (or the last Judge right on the rest)", order: 60, run: undo });
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

  // The page's other panels (issue rows, outcomes, decision points) still save through htmx.
  // A lapsed session answers with the login page: never swap that in.
  document.addEventListener("htmx:beforeSwap", function (ev) {
    var url = ev.detail.xhr && ev.detail.xhr.responseURL;
    var login = root.getAttribute("data-login-url");
    if (!url || !login || new URL(url).pathname !== login) return;
    ev.detail.shouldSwap = false;
    flash("You are logged out. Log in again in a new tab, then try again.");
  });

  document.addEventListener("htmx:afterRequest", function (ev) {
    if (ev.detail && ev.detail.failed) flash("Not saved. Check the connection and try again.");
  });

  document.body.addEventListener("issue-filed", function (ev) {
    var n = ev.detail && ev.detail.number;
    flash(n ? "Filed row " + n + "." : "Filed.");
  });

  // Leaving while a change is on its way or waits its turn, a save failed, or an issue row is
  // typed but not filed: ask first.
  window.addEventListener("beforeunload", function (ev) {
    if (leaving) return;
    var saving = (inFlight && !syncing) || queue.length || document.querySelector("#issue-form.htmx-request");
    var unsaved = document.querySelector("[data-verdict].unsaved");
    var what = document.getElementById("issue-what");
    if (saving || unsaved || (what && what.value.trim())) { ev.preventDefault(); ev.returnValue = ""; }
  });

  // Open on the first verdict to mark, in view, so the first r marks what the reviewer sees.
  var start = firstUnmarked() || verdicts()[0];
  if (start) setCurrent(start);
  updateRest();
})();
