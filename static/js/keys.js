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
// - `scope` (a CSS selector) makes a key work only while the focus is inside that element (a
//   panel's own keys: digits 1-5 in the outcome panel); there it wins over the page-wide key, and
//   it also works from a radio button or checkbox inside the scope, which take no typing.
(function () {
  "use strict";

  var keys = {};
  var scoped = {}; // key -> [entry with a scope]
  var entries = [];
  var escapeHooks = [];

  function typing(target) {
    if (!target || !target.closest) return false;
    return !!target.closest("input, textarea, select, [contenteditable=true]");
  }

  function choosing(target) {
    return !!(target && target.matches && target.matches("input[type=radio], input[type=checkbox]"));
  }

  function scopedEntry(key, target) {
    var list = scoped[key] || [];
    var el = target && target.closest ? target : document.activeElement;
    for (var i = 0; i < list.length; i++) {
      if (el && el.closest && el.closest(list[i].scope)) return list[i];
    }
    return null;
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
      scope: opts.scope || "",
    };
    function put(k, e) {
      if (e.scope) (scoped[k] = scoped[k] || []).push(e);
      else keys[k] = e;
    }
    put(key, entry);
    entry.also.forEach(function (k) {
      if (opts.runAlso) put(k, { run: opts.runAlso[k], scope: entry.scope });
    });
    if (entry.help) entries.push(entry);
    scheduleHelp();
  }

  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var inScope = scopedEntry(ev.key, ev.target);
    if (typing(ev.target) && !(inScope && choosing(ev.target))) {
      if (ev.key === "Escape") {
        ev.target.blur();
        escapeHooks.forEach(function (fn) { fn(ev); });
      }
      return;
    }
    var entry = inScope || keys[ev.key];
    if (!entry || !entry.run) return;
    if (entry.run(ev) !== false) ev.preventDefault();
  });

  window.DocketKeys = {
    register: register,
    onEscape: function (fn) { escapeHooks.push(fn); },
    typing: typing,
  };
})();
