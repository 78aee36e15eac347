// Decision points on the review page: label the moments where the agent had to choose.
//
// Keys (registered with DocketKeys, so the help panel lists them): d / D next / previous moment
// (it becomes current, and the recording plays from two seconds before it), y the agent chose
// right (the agent's answer is the label), x it chose wrong (with two answers, the other one;
// with more, the first other answer gets focus to pick with Tab and Enter). Every key has a
// mouse twin: the answer buttons themselves. The server does the saving (htmx).
(function () {
  "use strict";

  var panel = document.getElementById("decision-panel");
  if (!panel || !window.DocketKeys) return;
  var currentId = null;
  var LEAD_IN_MS = 2000;

  function moments() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-moment]"));
  }
  function byId(id) {
    return document.getElementById("moment-" + id);
  }
  function flash(text) {
    var f = document.getElementById("review-flash");
    if (!f) return;
    f.textContent = text;
    f.classList.add("show");
    clearTimeout(flash.t);
    flash.t = setTimeout(function () { f.classList.remove("show"); }, 2600);
  }

  function setCurrent(el, play) {
    moments().forEach(function (m) { m.classList.remove("is-current"); });
    if (!el) { currentId = null; return; }
    currentId = el.getAttribute("data-moment");
    el.classList.add("is-current");
    el.focus({ preventScroll: true });
    el.scrollIntoView({ block: "nearest" });
    var at = parseInt(el.getAttribute("data-at-ms"), 10);
    var a = window.DocketPlayer && window.DocketPlayer.audio();
    if (play && a && !isNaN(at)) {
      a.currentTime = Math.max(0, at - LEAD_IN_MS) / 1000;
      var p = a.play();
      if (p && p.catch) p.catch(function () { /* autoplay refused: the cue stays */ });
    }
  }

  function current() {
    return currentId ? byId(currentId) : null;
  }

  function move(step) {
    var list = moments();
    if (!list.length) { flash("No decision points on this call."); return; }
    var i = list.indexOf(current());
    if (i < 0) {
      var unlabeled = list.filter(function (m) { return m.classList.contains("unlabeled"); });
      setCurrent(step > 0 ? (unlabeled[0] || list[0]) : list[list.length - 1], true);
      return;
    }
    setCurrent(list[Math.min(list.length - 1, Math.max(0, i + step))], true);
  }

  function answerButtons(el) {
    return Array.prototype.slice.call(el.querySelectorAll("button[name=answer]"));
  }

  function label(agentRight) {
    var el = current();
    if (!el) { move(1); el = current(); }
    if (!el) return;
    var choice = el.getAttribute("data-choice");
    var buttons = answerButtons(el);
    if (agentRight) {
      var same = buttons.filter(function (b) { return b.value === choice; })[0];
      if (same) same.click();
      return;
    }
    var others = buttons.filter(function (b) { return b.value !== choice; });
    if (others.length === 1) others[0].click();
    else if (others.length) { others[0].focus(); flash("Pick the right answer: Tab, then Enter."); }
  }

  document.addEventListener("click", function (ev) {
    var el = ev.target.closest && ev.target.closest("[data-moment]");
    if (el && el.getAttribute("data-moment") !== currentId) setCurrent(el, false);
  });

  // A labeled moment comes back from the server (the event arrives with the response, the new
  // element after the swap settles): keep the count right and move on to the next unlabeled one.
  var labeledId = null;
  document.body.addEventListener("decision-labeled", function (ev) {
    labeledId = ev.detail && String(ev.detail.decision);
  });
  document.addEventListener("htmx:afterSettle", function () {
    var fresh = labeledId && byId(labeledId);
    if (!fresh) return;
    labeledId = null;
    var list = moments();
    var done = list.filter(function (m) { return !m.classList.contains("unlabeled"); }).length;
    var count = document.getElementById("decision-count");
    if (count) count.textContent = "· " + done + " of " + list.length + " labeled";
    var next = list.slice(list.indexOf(fresh) + 1).filter(function (m) { return m.classList.contains("unlabeled"); })[0];
    setCurrent(next || fresh, false);
    flash(next ? "Saved. Next moment: d plays it." : "Saved.");
  });

  var K = window.DocketKeys;
  K.register("d", { also: ["D"], help: "next / previous decision point (plays the moment)", order: 82,
    run: function () { move(1); }, runAlso: { D: function () { move(-1); } } });
  K.register("y", { help: "decision point: the agent chose right", order: 84, run: function () { label(true); } });
  K.register("x", { help: "decision point: the agent chose wrong (the other answer)", order: 86, run: function () { label(false); } });
})();
