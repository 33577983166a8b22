// Live results: as the user types, fetch the results the server renders for the same query
// string, swap them in, and keep the URL in step so that it can be shared. Without JavaScript
// the form is a plain GET form and the server answers with the results filled in. A form that
// posts (/fit: measurements are data, not a link) is posted here too, and its URL keeps only the
// inputs short enough for a link. Inputs of any page too long for a link are posted as well.
(function () {
  "use strict";
  var form = document.getElementById("calc");
  if (!form || !window.fetch) return;
  var timer = null;
  var pending = null;
  var posted = form.method.toLowerCase() === "post";
  var maxQuery = parseInt(form.getAttribute("data-max-query"), 10) || 2048;
  var refused = document.getElementById("refused");

  function params() {
    return new URLSearchParams(new FormData(form));
  }

  // The inputs as a link may carry them: the longest left out until the query fits (as the server does).
  function shortQuery(all) {
    var kept = new URLSearchParams(all);
    while (kept.toString().length > maxQuery - 64) {
      var longest = null;
      kept.forEach(function (value, key) { if (longest === null || value.length > kept.get(longest).length) longest = key; });
      if (longest === null) break;
      kept.delete(longest);
    }
    return kept.toString();
  }

  // What a screen reader hears when the results change (#said, a status): one line, not the tables.
  // A part may mark its line (data-said); else the main figure, else the last row of the first
  // table by its first two headers, else the placeholder that says why there is none.
  var said = document.getElementById("said");
  function text(el) { return el ? el.textContent.replace(/\s+/g, " ").trim() : ""; }
  function summary() {
    var results = document.getElementById("results");
    if (!results) return "";
    var french = document.documentElement.lang === "fr";
    var colon = french ? "\u00a0: " : ": ";
    var marked = results.querySelector("[data-said]");
    if (marked) return text(marked);
    var main = results.querySelector(".results .main");
    if (main) return text(main.querySelector("dt")) + colon + text(main.querySelector("dd"));
    var table = results.querySelector("table");
    var rows = table && table.tBodies.length ? table.tBodies[0].rows : [];
    if (rows.length) {
      var heads = table.tHead ? table.tHead.rows[0].cells : [];
      var last = rows[rows.length - 1].cells;
      var parts = [];
      for (var i = 0; i < Math.min(2, last.length); i++) parts.push((heads[i] ? text(heads[i]) + colon : "") + text(last[i]));
      return parts.join(french ? "\u00a0; " : "; ");
    }
    return text(results.querySelector(".placeholder"));
  }
  function say() {
    if (said) said.textContent = summary();
  }

  // Said under the form, and in place of results that no longer match the inputs.
  function refuse(text) {  // said once, by the alert under the form
    if (refused) { refused.textContent = text; refused.hidden = false; }
    var results = document.getElementById("results");
    if (results) {
      var p = document.createElement("p");
      p.className = "placeholder";
      p.textContent = text;
      results.replaceChildren(p);
    }
  }

  function swap(doc, id) {
    var fresh = doc.getElementById(id);
    var here = document.getElementById(id);
    if (!fresh || !here) return;
    if (id.slice(-8) === "-reading") {
      here.hidden = fresh.hidden;
      here.textContent = fresh.textContent.trim();
    } else if (id.slice(-6) === "-error") {
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

  // Inputs too long for a link (a value pasted by mistake) are posted too, so that the field
  // that is too long says so, as every field does, rather than the request being refused.
  function tooLong(all) {
    return all.toString().length > maxQuery - 64;
  }

  // Fields a result fills in for the link (nccl_fit: what a log measured), each said by an element of the
  // results: the field (data-field), its value (data-value) and the field it stands for (data-from, the log).
  function carriers() {
    return Array.prototype.slice.call(document.querySelectorAll("#results [data-field]"));
  }
  // Whether a carrier's field still holds what the result gave it (not what the user typed since).
  function holds(el) {
    var input = form.elements.namedItem(el.getAttribute("data-field"));
    return input && input.value === el.getAttribute("data-value") ? input : null;
  }
  // A field emptied (the log) empties the one filled from it (nccl_fit), so the result no longer rests on it.
  function emptied(field) {
    if (!field || !field.name || field.value.trim() !== "") return;
    carriers().forEach(function (el) {
      var input = el.getAttribute("data-from") === field.name ? holds(el) : null;
      if (input) input.value = "";
    });
  }

  function update() {
    var all = params();
    var post = posted || tooLong(all);
    var qs = post ? shortQuery(all) : all.toString();
    history.replaceState(null, "", "?" + qs);
    if (pending) pending.abort();
    pending = new AbortController();
    var url = form.getAttribute("data-fragment") + "?" + (post ? "lang=" + document.documentElement.lang : qs);
    var init = { signal: pending.signal, headers: { Accept: "text/html" } };
    if (post) { init.method = "POST"; init.body = all; }
    fetch(url, init)
      .then(function (response) { return response.text().then(function (html) { return [response.ok, html]; }); })
      .then(function (answer) {
        var doc = new DOMParser().parseFromString(answer[1], "text/html");
        if (!answer[0]) {  // refused (too large, too long): the server's page says why, with the limit
          var why = doc.getElementById("refusal");
          refuse(why ? why.textContent.trim() : form.getAttribute("data-failed"));
          return;
        }
        if (refused) refused.hidden = true;
        // The fragment holds the results, the worked example and every field's error, each by id.
        Array.prototype.forEach.call(doc.body.querySelectorAll(":scope > [id]"), function (el) { swap(doc, el.id); });
        // A field the result fills in for the link (nccl_fit: what a log measured), then the URL with it.
        var filled = false;
        carriers().forEach(function (el) {
          var input = form.elements.namedItem(el.getAttribute("data-field"));
          if (input && input.value !== el.getAttribute("data-value")) { input.value = el.getAttribute("data-value"); filled = true; }
        });
        if (filled) history.replaceState(null, "", "?" + (posted || tooLong(params()) ? shortQuery(params()) : params().toString()));
        say();
        document.dispatchEvent(new CustomEvent("dpscale:updated"));
      })
      .catch(function (err) { if (err.name !== "AbortError") refuse(form.getAttribute("data-failed")); });
  }

  form.addEventListener("change", function (event) {
    emptied(event.target);
    clearTimeout(timer);
    timer = setTimeout(update, 120);
  });
  form.addEventListener("input", function (event) {
    emptied(event.target);
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
      if (input.files[0].size > parseInt(input.getAttribute("data-max-bytes"), 10)) {
        refuse(input.getAttribute("data-too-large"));  // not read: it could not be sent
        return;
      }
      input.files[0].text().then(function (text) {
        target.value = text;
        target.dispatchEvent(new Event("input", { bubbles: true }));
      });
    });
  });
  // The language switch keeps what was typed, also after live edits.
  var switcher = document.querySelector(".lang-switch");
  if (switcher) {
    switcher.addEventListener("click", function (event) {
      var all = params();
      all.set("lang", switcher.getAttribute("hreflang"));
      all.set("from", document.documentElement.lang);  // numbers are rewritten for the new language
      if (all.toString().length > maxQuery) {  // a log whose run a field carries: the link carries that field
        carriers().forEach(function (el) { if (el.getAttribute("data-from") && holds(el)) all.delete(el.getAttribute("data-from")); });
      }
      if (all.toString().length > maxQuery) {  // too long for a link: posted to the other language
        event.preventDefault();
        var carrier = document.createElement("form");
        carrier.method = "post";
        carrier.action = form.getAttribute("action").split("?")[0] + "?lang=" + all.get("lang");
        all.forEach(function (value, key) {
          var field = document.createElement("input");
          field.type = "hidden";
          field.name = key;
          field.value = value;
          carrier.appendChild(field);
        });
        document.body.appendChild(carrier);
        carrier.submit();
        return;
      }
      switcher.setAttribute("href", "?" + all.toString());
    });
  }
})();
