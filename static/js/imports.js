// The import page: a large file takes a while to upload, so the form is sent through XHR and a
// bar follows the bytes. The form posts as it would without JavaScript; the page the server
// answers (the preview, or the form with its error) replaces this one.
(function () {
  "use strict";
  document.addEventListener("submit", function (ev) {
    var form = ev.target.closest && ev.target.closest("form[data-upload-progress]");
    if (!form || !window.FormData || !window.DOMParser) return;
    ev.preventDefault();
    var bar = form.querySelector("progress");
    var button = form.querySelector("button[type=submit]");
    var xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.upload.addEventListener("progress", function (e) {
      if (!e.lengthComputable || !bar) return;
      bar.hidden = false;
      bar.value = Math.round((100 * e.loaded) / e.total);
      bar.textContent = bar.value + "%";
    });
    xhr.addEventListener("load", function () {
      if (xhr.status < 300 && xhr.responseURL && xhr.responseURL !== form.action) {
        window.location.assign(xhr.responseURL); // the preview page the upload redirected to
        return;
      }
      var answered = new DOMParser().parseFromString(xhr.responseText, "text/html");
      var main = answered.querySelector("main");
      if (main) {
        document.querySelector("main").replaceWith(main);
        main.focus();
      } else {
        form.submit();
      }
    });
    xhr.addEventListener("error", function () { form.submit(); });
    if (button) button.disabled = true;
    xhr.send(new FormData(form));
  });
})();
