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
// - hold(fn): a page module whose work is on its way to the server takes the keys pressed
//   meanwhile (fn returns true to take one) and runs them later, in order, with replay(key): a
//   held key runs as if pressed then, and types into the field that has the focus by then (the
//   note that `e` opened), so text typed fast never runs as shortcuts.
(function () {
  "use strict";

  var keys = {};
  var scoped = {}; // key -> [entry with a scope]
  var entries = [];
  var escapeHooks = [];
  var holder = null;

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

  function intoField(target, key) {
    return typing(target) && !(scopedEntry(key, target) && choosing(target));
  }

  function leaveField(field, ev) {
    field.blur();
    escapeHooks.forEach(function (fn) { fn(ev); });
  }

  // Run the key's entry; return whether one ran and took the key.
  function dispatch(ev) {
    var entry = scopedEntry(ev.key, ev.target) || keys[ev.key];
    if (!entry || !entry.run) return false;
    return entry.run(ev) !== false;
  }

  // Type a held key into the field as the browser would have: text at the caret, Backspace and
  // Delete, Enter submits the field's form, Esc leaves the field.
  function typeInto(field, key) {
    if (key === "Escape") { leaveField(field, { key: key, target: field }); return; }
    if (key === "Enter") {
      if (field.tagName === "TEXTAREA") key = "\n";
      else { if (field.form) field.form.requestSubmit(); return; }
    }
    var text = key.length === 1 ? key : "";
    var start = null, end = null;
    try { start = field.selectionStart; end = field.selectionEnd; } catch (e) { start = null; }
    if (start === null) { // a number field has no caret to write at
      if (text) field.value += text;
      else if (key === "Backspace") field.value = field.value.slice(0, -1);
    } else if (text) {
      field.setRangeText(text, start, end, "end");
    } else if (key === "Backspace" || key === "Delete") {
      if (start === end) {
        if (key === "Backspace" && start > 0) start -= 1;
        else if (key === "Delete" && end < field.value.length) end += 1;
      }
      field.setRangeText("", start, end, "end");
    } else {
      return;
    }
    field.dispatchEvent(new Event("input", { bubbles: true }));
  }

  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (intoField(ev.target, ev.key)) {
      if (ev.key === "Escape") leaveField(ev.target, ev);
      return;
    }
    if (holder && holder(ev)) { ev.preventDefault(); return; }
    if (dispatch(ev)) ev.preventDefault();
  });

  window.DocketKeys = {
    register: register,
    onEscape: function (fn) { escapeHooks.push(fn); },
    typing: typing,
    hold: function (fn) { holder = fn; },
    replay: function (key) {
      var target = document.activeElement || document.body;
      if (intoField(target, key)) typeInto(target, key);
      else dispatch({ key: key, target: target, preventDefault: function () {} });
    },
  };
})();
