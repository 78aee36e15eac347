// The review page's outcome panel: o moves the focus to it; there, 1-5 rate the question that has
// the focus (or the first one not yet answered). A rating of 3 or more saves at once; a lower one
// needs a reason, so the reason field takes the focus and Enter saves. The server keeps the
// rating (one per reviewer, call and question); saving again replaces it.
(function () {
  "use strict";

  var K = window.DocketKeys;
  if (!K || !document.getElementById("outcome-panel")) return;

  function panel() {
    return document.getElementById("outcome-panel");
  }
  function say(text) {
    var f = document.getElementById("review-flash");
    if (!f) return;
    f.textContent = text;
    f.classList.add("show");
    clearTimeout(say.t);
    say.t = setTimeout(function () { f.classList.remove("show"); }, 2600);
  }

  function currentForm() {
    var p = panel();
    var active = document.activeElement;
    var form = active && active.closest && active.closest(".outcome-form");
    if (form && p.contains(form)) return form;
    var forms = Array.prototype.slice.call(p.querySelectorAll(".outcome-form"));
    return forms.filter(function (f) { return !f.querySelector("input[name=rating]:checked"); })[0] || forms[0];
  }

  function focusPanel() {
    var p = panel();
    if (!p) return;
    p.scrollIntoView({ block: "nearest" });
    var form = currentForm();
    var picked = form && form.querySelector("input[name=rating]:checked");
    (picked || p).focus({ preventScroll: true });
    say("Outcome: press 1 (bad) to 5 (good).");
  }

  function rate(n) {
    return function () {
      var form = currentForm();
      if (!form) return;
      var radio = form.querySelector("input[name=rating][value='" + n + "']");
      if (!radio) return;
      radio.checked = true;
      var badAtMost = parseInt(form.getAttribute("data-bad-at-most"), 10) || 2;
      var reason = form.querySelector("input[name=reason]");
      if (n <= badAtMost && reason && !reason.value.trim()) {
        reason.focus();
        say("Rated " + n + ": say why, then Enter.");
        return;
      }
      form.requestSubmit();
    };
  }

  K.register("o", { help: "go to the outcome question", order: 85, run: focusPanel });
  var runAlso = {};
  ["2", "3", "4", "5"].forEach(function (d) { runAlso[d] = rate(parseInt(d, 10)); });
  K.register("1", {
    also: ["2", "3", "4", "5"], scope: "#outcome-panel", order: 86, run: rate(1), runAlso: runAlso,
    help: "rate the outcome 1 (bad) to 5 (good), in the outcome panel; 1-2 ask for a reason",
  });

  // The panel comes back from the server after a save: keep the focus in it, on the field in error.
  document.addEventListener("htmx:afterSwap", function (ev) {
    var p = panel();
    if (!p || ev.detail.target !== p && !(ev.detail.elt && ev.detail.elt.id === "outcome-panel")) return;
    var bad = p.querySelector("[aria-invalid=true], .field-error");
    if (bad && bad.matches("input")) { bad.focus(); return; }
    if (bad) {
      var field = p.querySelector("input[name=rating]:checked") || p.querySelector("input[name=rating]");
      if (field) { field.focus(); return; }
    }
    var state = p.querySelector(".outcome-state");
    p.focus({ preventScroll: true });
    if (state && state.textContent.trim()) say(state.textContent.trim() + ".");
  });
})();
