// Live results: as the user types, fetch the results the server renders for the same query
// string, swap them in, and keep the URL in step so that it can be shared. Without JavaScript
// the form is a plain GET form and the server answers with the results filled in.
(function () {
  "use strict";
  var form = document.getElementById("calc");
  if (!form || !window.fetch) return;
  var timer = null;
  var pending = null;

  function query() {
    return new URLSearchParams(new FormData(form)).toString();
  }

  function swap(doc, id) {
    var fresh = doc.getElementById(id);
    var here = document.getElementById(id);
    if (!fresh || !here) return;
    if (id.slice(-6) === "-error") {
      here.hidden = fresh.hidden;
      here.textContent = fresh.textContent.trim();
      var input = document.getElementById(id.slice(0, -6));
      if (input) {
        if (fresh.hidden) input.removeAttribute("aria-invalid");
        else input.setAttribute("aria-invalid", "true");
      }
    } else {
      here.replaceChildren.apply(here, Array.prototype.slice.call(fresh.childNodes));
    }
  }

  function update() {
    var qs = query();
    history.replaceState(null, "", "?" + qs);
    if (pending) pending.abort();
    pending = new AbortController();
    fetch(form.getAttribute("data-fragment") + "?" + qs, { signal: pending.signal, headers: { Accept: "text/html" } })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        // The fragment holds the results, the worked example and every field's error, each by id.
        var doc = new DOMParser().parseFromString(html, "text/html");
        Array.prototype.forEach.call(doc.body.querySelectorAll(":scope > [id]"), function (el) { swap(doc, el.id); });
        document.dispatchEvent(new CustomEvent("dpscale:updated"));
      })
      .catch(function (err) { if (err.name !== "AbortError") console.error(err); });
  }

  form.addEventListener("change", function () {
    clearTimeout(timer);
    timer = setTimeout(update, 120);
  });
  form.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(update, 120);
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    clearTimeout(timer);
    update();
  });
  // A file chosen for upload is read here and pasted into its text field: nothing is uploaded.
  Array.prototype.forEach.call(document.querySelectorAll("input[type=file][data-fills]"), function (input) {
    input.addEventListener("change", function () {
      var target = document.getElementById(input.getAttribute("data-fills"));
      if (!target || !input.files || !input.files[0]) return;
      input.files[0].text().then(function (text) {
        target.value = text;
        target.dispatchEvent(new Event("input", { bubbles: true }));
      });
    });
  });
  // The language switch keeps what was typed, also after live edits.
  var switcher = document.querySelector(".lang-switch");
  if (switcher) {
    switcher.addEventListener("click", function () {
      var params = new URLSearchParams(new FormData(form));
      params.set("lang", switcher.getAttribute("hreflang"));
      params.set("from", document.documentElement.lang);  // numbers are rewritten for the new language
      switcher.setAttribute("href", "?" + params.toString());
    });
  }
})();
