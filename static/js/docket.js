// Docket's small shared script, loaded in <head> without defer so the "js" class is on <html>
// before the page paints (the phone menu is folded only when this script can unfold it).
// Page-specific behaviour lives in its own file.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  // The phone menu: one button shows or hides the navigation.
  document.addEventListener("click", function (ev) {
    var toggle = ev.target.closest && ev.target.closest("[data-nav-toggle]");
    if (!toggle) return;
    var bar = toggle.closest(".topbar");
    var open = !bar.classList.contains("nav-open");
    bar.classList.toggle("nav-open", open);
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  });

  // A table box that scrolls sideways must be reachable by keyboard (Tab, then arrow keys).
  function scrollables() {
    document.querySelectorAll(".scroll-x, .table-wrap, .g-scroll").forEach(function (box) {
      if (box.scrollWidth > box.clientWidth + 1) {
        if (!box.hasAttribute("tabindex")) box.setAttribute("tabindex", "0");
        if (!box.hasAttribute("role")) {
          box.setAttribute("role", "region");
          var caption = box.querySelector("caption, table[aria-label]");
          var label = caption ? (caption.getAttribute("aria-label") || caption.textContent) : "Table";
          box.setAttribute("aria-label", label.trim() + " (scrolls sideways)");
        }
      } else if (box.getAttribute("tabindex") === "0") {
        box.removeAttribute("tabindex");
      }
    });
  }
  document.addEventListener("DOMContentLoaded", scrollables);
  window.addEventListener("resize", scrollables);
  document.addEventListener("htmx:afterSettle", scrollables);
})();
