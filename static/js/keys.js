// Docket's page keys: one keydown listener and a registry of keys, so every page module adds its
// keys in one place and the help panel lists exactly what is registered.
//
//   DocketKeys.register("r", { help: "mark right (and move on)", order: 30, run: function (ev) { ... } });
//
// - run(ev) handles the key; returning false lets the browser have it (no preventDefault).
// - Keys never fire while the reader types in a field; Esc leaves the field (onEscape hooks run).
// - Keys with modifiers (Ctrl, Cmd, Alt) are left to the browser.
// - An element [data-keys-help] (a <dl>) is filled with the registered keys, sorted by `order`.
// - `label` shows a key differently in the help ("space" for " "); `also` lists more keys that
//   share the entry ("k" beside "j").
(function () {
  "use strict";

  var keys = {};
  var entries = [];
  var escapeHooks = [];

  function typing(target) {
    if (!target || !target.closest) return false;
    return !!target.closest("input, textarea, select, [contenteditable=true]");
  }

  function renderHelp() {
    document.querySelectorAll("[data-keys-help]").forEach(function (dl) {
      dl.textContent = "";
      entries.slice().sort(function (a, b) { return a.order - b.order; }).forEach(function (e) {
        var row = document.createElement("div");
        var dt = document.createElement("dt");
        [e.key].concat(e.also || []).forEach(function (k, i) {
          if (i) dt.appendChild(document.createTextNode(" "));
          var kbd = document.createElement("kbd");
          kbd.textContent = i === 0 && e.label ? e.label : k;
          dt.appendChild(kbd);
        });
        var dd = document.createElement("dd");
        dd.textContent = e.help;
        row.appendChild(dt);
        row.appendChild(dd);
        dl.appendChild(row);
      });
    });
  }

  var pending = null;
  function scheduleHelp() {
    if (pending) return;
    pending = setTimeout(function () { pending = null; renderHelp(); }, 0);
  }

  function register(key, opts) {
    var entry = {
      key: key, run: opts.run, help: opts.help || "", label: opts.label || "",
      also: opts.also || [], order: opts.order === undefined ? 100 : opts.order,
    };
    keys[key] = entry;
    entry.also.forEach(function (k) { if (opts.runAlso) keys[k] = { run: opts.runAlso[k] }; });
    if (entry.help) entries.push(entry);
    scheduleHelp();
  }

  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (typing(ev.target)) {
      if (ev.key === "Escape") {
        ev.target.blur();
        escapeHooks.forEach(function (fn) { fn(ev); });
      }
      return;
    }
    var entry = keys[ev.key];
    if (!entry || !entry.run) return;
    if (entry.run(ev) !== false) ev.preventDefault();
  });

  window.DocketKeys = {
    register: register,
    onEscape: function (fn) { escapeHooks.push(fn); },
    typing: typing,
  };
})();
