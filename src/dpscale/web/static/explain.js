// /explain in the browser: the chosen trace files are read here and nothing is sent, unless
// "Analyse on the server" is ticked (then the form posts them, as it does without JavaScript).
// The rules that turn a trace into a breakdown are in trace_rules.js, which mirrors the Python core.
//
// Files are read one at a time, each reduced to its timeline before the next is opened, so that
// one file's JSON at most is held at once; a file of more than data-local-most characters is refused.
(function () {
  "use strict";
  var form = document.getElementById("explain");
  if (!form || !window.fetch || !window.TextDecoderStream) return;
  var words = JSON.parse(form.getAttribute("data-words"));
  var localMost = parseInt(form.getAttribute("data-local-most"), 10);
  var lang = document.documentElement.lang;
  var input = document.getElementById("trace");
  var server = document.getElementById("server");
  var error = document.getElementById("explain-error");
  var results = document.getElementById("results");
  var said = document.getElementById("said");  // what a screen reader hears as the results change: a line

  var rules = window.dpscaleTraces;
  if (!rules) return;
  var Refused = rules.Refused, say = rules.say;

  // -- what the page shows ---------------------------------------------------------------------
  // Rounded as dpscale.format rounds: the number's shortest decimal text (Python's repr, JavaScript's
  // String), half to even; Intl takes a decimal string exactly.
  function decimal(x, places) {  // the decimal text of x times 10**places, exactly
    var m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
    if (!m) return String(x);
    var digits = m[2] + (m[3] || ""), point = m[2].length + parseInt(m[4] || "0", 10) + places;
    if (point <= 0) return m[1] + "0." + "0".repeat(-point) + digits;
    if (point >= digits.length) return m[1] + digits + "0".repeat(point - digits.length);
    return m[1] + digits.slice(0, point) + "." + digits.slice(point);
  }
  function format(x, options) {
    return new Intl.NumberFormat(lang, Object.assign({ roundingMode: "halfEven" }, options)).format(x);
  }
  function number(x, decimals) {  // a number below 1 keeps four significant digits, as dpscale.format.format_number
    if (x && Math.abs(x) < 1) decimals = Math.max(decimals, Math.min(15, 3 - Math.floor(Math.log10(Math.abs(x)))));
    return format(decimal(x, 0), { maximumFractionDigits: decimals });
  }
  function percent(x) {
    var text = format(decimal(x, 0), { style: "percent", maximumFractionDigits: 1 });
    return lang === "fr" ? text.replace(/\s*%/, "\u00a0%") : text;  // as dpscale.format.format_percent
  }
  function ms(seconds) {  // three significant digits, as dpscale.format.format_milliseconds
    var value = seconds * 1000;
    var decimals = value > 0 ? Math.max(0, 2 - Math.floor(Math.log10(value))) : 0;
    return format(decimal(seconds, 3), { style: "unit", unit: "millisecond", unitDisplay: "short", maximumFractionDigits: decimals });
  }
  function gigabytes(bytesPerSecond) { return number(bytesPerSecond / 1e9, 3); }  // as format_gigabytes_per_second
  function times(x) { return number(x, 2) + (lang === "fr" ? "\u00a0×" : "×"); }

  function el(name, attributes, children) {
    var node = document.createElement(name);
    Object.keys(attributes || {}).forEach(function (k) { node.setAttribute(k, attributes[k]); });
    (children || []).forEach(function (c) { node.append(c); });
    return node;
  }
  function cell(text, value) { return el("td", value === undefined || value === null ? {} : { "data-value": String(value) }, [text]); }
  function table(id, caption, header, rows, first) {
    var head = el("tr", {}, header.map(function (h, i) { return el("th", i === 0 && first ? { scope: "col", class: "text" } : { scope: "col" }, [h]); }));
    var t = el("table", { class: "growth", id: id }, [el("caption", {}, [caption]), el("thead", {}, [head]), el("tbody", {}, rows)]);
    return el("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": caption }, [t]);
  }

  // Step = compute + exposed + other: a rank's wait is part of its exposed communication, said there
  // (as dpscale.calculators.explain.exposed_text); the step alone is a rank's work, compute + other
  // (alone_text). The figures are trace_rules.js's, as the core's results hold them.
  function exposed(r) {
    var seconds = r.exposed_communication.mean;
    return r.exposed_wait > 0 ? say(words.waiting, { exposed: ms(seconds), wait: ms(r.exposed_wait) }) : ms(seconds);
  }
  function alone(found) {
    var low = ms(found.work_range[0]), high = ms(found.work_range[1]), mean = ms(found.calibration.single_device_step);
    return low === high ? mean : say(words.by_rank, { low: low, high: high, mean: mean });
  }

  function toPredict(traced) {  // the run's figures, handed to /predict as --from-trace hands them
    var link = el("a", { href: "/predict?lang=" + lang + "&traced=" + encodeURIComponent(traced) }, [words.to_predict]);
    return el("p", { class: "next", id: "to-predict" }, [link]);
  }

  function show(found) {
    var c = found.calibration;
    var summary = [
      [words.slowest, number(found.slowest_rank, 0), found.slowest_rank, "slowest_rank"],
      [words.step_time, ms(found.step_time), found.step_time, "step_time"],
      [words.efficiency, percent(found.efficiency), found.efficiency, "efficiency"],
      [words.single, alone(found), c.single_device_step, "single_device_step"],
      [words.communication, ms(c.communication_time), c.communication_time, "communication_time"],
      [words.straggler, ms(c.straggler_wait), c.straggler_wait, "straggler_wait"],
      [words.cv, percent(c.step_time_cv), c.step_time_cv, "step_time_cv"]
    ];
    if (c.bandwidth !== null) summary.push([words.bandwidth, gigabytes(c.bandwidth) + " GB/s", c.bandwidth, "bandwidth"]);
    var dl = el("dl", { class: "results", id: "summary" }, summary.map(function (r) {
      return el("div", {}, [el("dt", {}, [r[0]]), el("dd", { "data-value": String(r[2]), "data-key": r[3] }, [r[1]])]);
    }));
    var rows = found.ranks.map(function (r, i) {
      var tr = el("tr", i === found.slowest ? { class: "current" } : {}, [
        cell(number(r.rank, 0), r.rank), cell(number(r.steps, 0), r.steps),
        cell(ms(r.step_time.mean) + " ± " + ms(r.step_time.sd), r.step_time.mean),
        cell(ms(r.compute.mean), r.compute.mean),
        cell(exposed(r), r.exposed_communication.mean),
        cell(ms(r.other.mean), r.other.mean), cell(ms(r.work), r.work),
        cell(r.overlap === null ? "—" : percent(r.overlap), r.overlap)
      ]);
      return tr;
    });
    var parts = [dl, table("ranks", words.caption, [words.rank, words.steps, words.step, words.compute, words.exposed, words.other, words.alone, words.overlap], rows)];
    if (found.levers.length) {
      parts.push(table("levers", words.levers, [words.lever, words.saves, words.speedup], found.levers.map(function (l) {
        var td = cell(words[l.name === "communication" ? "lever_communication" : l.name]);
        td.className = "text";
        return el("tr", {}, [td, cell(ms(l.saving), l.saving), cell(l.speedup === null ? "—" : times(l.speedup), l.speedup)]);
      }), true));
    }
    parts.push(toPredict(rules.tracedText(found)));
    if (found.notes.length) parts.push(el("ul", { class: "warnings", id: "notes" }, found.notes.map(function (n) { return el("li", {}, [n]); })));
    parts.push(timelineFigure(found));
    results.replaceChildren.apply(results, parts);
  }

  // -- the timeline of one step ----------------------------------------------------------------
  var SVG = "http://www.w3.org/2000/svg";
  var COLOURS = { compute: "#0b5cad", exposed: "#d9480f", other: "#d0d7de" };

  function svg(name, attributes, text) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attributes).forEach(function (k) { node.setAttribute(k, attributes[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function figure(choice) {  // the timeline's frame: its title, a step to choose (if any), the drawing, the legend
    var legend = el("ul", { class: "legend" }, [["compute", words.compute], ["exposed", words.exposed_long], ["other", words.other_long]].map(function (l) {
      return el("li", {}, [el("span", { class: "swatch " + l[0] }), l[1]]);
    }));
    var parts = [el("figcaption", { id: "timeline-title" })];
    if (choice) parts.push(el("label", { for: "step-choice" }, [words.step + " "]), choice);
    parts.push(el("div", { id: "timeline-drawing" }), legend);
    return el("figure", { class: "timeline", id: "timeline" }, parts);
  }

  // Draws rows() (one StepDrawing per rank, as dpscale.explain.timeline gives them) into the figure,
  // now and whenever the page's width changes.
  function drawInto(frame, rows, ranks, slowest) {
    var draw = function () {
      var drawn = rows();
      frame.querySelector("#timeline-title").textContent = say(words.timeline, { step: number(drawn[0].step, 0) });
      var holder = frame.querySelector("#timeline-drawing");
      holder.replaceChildren(drawing(drawn, ranks, slowest, holder.clientWidth || 640));
    };
    var timer = null;
    window.addEventListener("resize", function () { clearTimeout(timer); timer = setTimeout(draw, 150); });
    setTimeout(draw, 0);  // once the figure is in the page and has a width
    return draw;
  }

  function timelineFigure(found) {
    var steps = found.timelines[0].steps;
    var select = el("select", { id: "step-choice" }, steps.map(function (s, i) {
      var option = el("option", { value: String(i) }, [number(s[0], 0)]);
      if (i === steps.length - 1) option.selected = true;  // the last: past the warm-up
      return option;
    }));
    var frame = figure(select);
    var ranks = found.ranks.map(function (r) { return r.rank; });
    select.addEventListener("change", drawInto(frame, function () {
      var index = parseInt(select.value, 10);
      return found.timelines.map(function (t) { return rules.stepDrawing(t, index); });
    }, ranks, found.slowest));
    return frame;
  }

  function drawing(rows, ranks, slowest, width) {
    var band = rows.length <= 32 ? 22 : Math.max(4, Math.floor(704 / rows.length));
    var labelled = band >= 14;
    var left = labelled ? 64 : 8, right = 12, top = 6, axis = 26;
    var height = top + band * rows.length + axis;
    var longest = Math.max.apply(null, rows.map(function (d) { return d.length; })) || 1;
    var scale = (width - left - right) / longest;
    var label = say(words.timeline_alt, { step: number(rows[0].step, 0) });
    var root = svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, role: "img", "aria-label": label });
    rows.forEach(function (d, r) {
      var y = top + r * band;
      var bar = band - (labelled ? 6 : 1);
      var row = svg("g", { class: "rank" });
      root.append(row);
      row.append(svg("rect", { x: left, y: y, width: d.length * scale, height: bar, fill: COLOURS.other, class: "other" }));
      ["compute", "exposed"].forEach(function (part) {
        d[part].forEach(function (iv) {
          row.append(svg("rect", { x: left + iv[0] * scale, y: y, width: Math.max(0.5, (iv[1] - iv[0]) * scale), height: bar, fill: COLOURS[part], class: part }));
        });
      });
      if (labelled) {
        var name = say(words.rank_n, { rank: number(ranks[r], 0) });
        row.append(svg("text", { x: left - 6, y: y + bar - 4, "text-anchor": "end", "font-size": 12, "font-weight": r === slowest ? 700 : 400 }, name));
      }
    });
    var base = top + band * rows.length;
    root.append(svg("line", { x1: left, x2: width - right, y1: base + 2, y2: base + 2, stroke: "#57606a" }));
    [0, 0.5, 1].forEach(function (f) {
      var x = left + f * (width - left - right);
      root.append(svg("text", { x: x, y: base + 18, "font-size": 12, "text-anchor": f === 0 ? "start" : f === 1 ? "end" : "middle" }, ms(f * longest)));
    });
    return root;
  }

  // -- the form ------------------------------------------------------------------------------
  function fail(text) {
    error.textContent = text;
    error.hidden = false;
    results.replaceChildren(el("p", { class: "placeholder", id: "waiting" }, [text]));
  }

  function analyse() {
    var files = Array.from(input.files || []);
    if (!files.length) { fail(words.none); return; }
    forget();  // other files: the results kept are no longer theirs
    unname();
    error.hidden = true;
    var timelines = [];
    var next = function (i) {
      if (i === files.length) return Promise.resolve();
      var reading = say(words.reading, { file: files[i].name });
      results.replaceChildren(el("p", { class: "placeholder", id: "waiting" }, [reading]));
      said.textContent = reading;
      return rules.readTrace(files[i], words, localMost, number(localMost, 0)).then(function (t) { timelines.push(t); return next(i + 1); });
    };
    next(0).then(function () {
      var found = rules.explain(timelines, words);
      show(found);
      said.textContent = words.efficiency + (lang === "fr" ? "\u00a0: " : ": ") + percent(found.efficiency);
      keep({ kind: "local", timelines: timelines });
      form.setAttribute("data-done", "local");
    })
      .catch(function (err) { fail(err instanceof Refused ? err.text : String(err)); });
  }

  // Results the server analysed come with the last step of each rank to draw, in place of the
  // drawing the server made for a browser without JavaScript.
  function drawSent(given) {
    var sent = document.getElementById("server-timeline");
    if (!sent || !given) return;
    var frame = figure(null);
    sent.replaceWith(frame);
    drawInto(frame, function () { return given.ranks; }, given.ranks.map(function (d) { return d.rank; }), given.slowest);
  }

  // -- what is kept for the language switch ----------------------------------------------------
  // The last results, in the tab's sessionStorage (gone with the tab, never sent): what the browser
  // read (each rank's timeline, in no language: explained again in the page's), or what the server
  // answered, in both languages, and its drawing. A page that opens with no results of its own
  // shows them again; choosing files replaces them. Too large to keep (the storage's few MB): not kept.
  var KEY = "dpscale:explain";
  function keep(state) {
    try { sessionStorage.setItem(KEY, JSON.stringify(state)); } catch (err) { forget(); }
  }
  function forget() {
    try { sessionStorage.removeItem(KEY); } catch (err) { /* no storage: nothing kept */ }
  }
  function kept() {
    try { return JSON.parse(sessionStorage.getItem(KEY) || "null"); } catch (err) { return null; }
  }
  function markup(box) {  // the results' markup, less the server's drawing: the script draws its own
    var drawn = box.querySelector("#server-timeline");
    if (drawn) drawn.replaceChildren();
    return box.innerHTML;
  }
  function keptNote() {
    return el("p", { class: "note", id: "kept" }, [words.kept]);
  }
  // The server keeps what it explained a while, under a token the page's address and its language
  // link carry (result=…); once other files are chosen, neither names those results any more.
  var named = new URLSearchParams(location.search).get("result");
  function unname() {
    if (!named) return;
    named = null;
    var address = new URL(location.href);
    address.searchParams.delete("result");
    history.replaceState(history.state, "", address.pathname + address.search + address.hash);
    var switcher = document.querySelector(".lang-switch");
    if (!switcher) return;
    var link = new URL(switcher.getAttribute("href"), location.href);
    link.searchParams.delete("result");
    switcher.setAttribute("href", link.pathname + link.search);
  }

  var data = document.getElementById("timeline-data");
  if (data) {  // the server's results: kept in both languages, then drawn
    var given = JSON.parse(data.getAttribute("data-drawing"));
    var other = document.getElementById("results-other");
    var html = {};
    html[lang] = markup(results.cloneNode(true));
    if (other) {
      var box = document.createElement("div");
      box.append(other.content.cloneNode(true));
      html[other.getAttribute("lang")] = markup(box);
    }
    keep({ kind: "server", html: html, drawing: given, result: data.getAttribute("data-result") || null });
    drawSent(given);
  } else if (error.hidden) {
    var state = kept();
    // An address whose results the server no longer keeps: shown again only if these are them.
    if (document.getElementById("gone") && !(state && state.kind === "server" && state.result === named)) state = null;
    if (state && state.kind === "local") {
      try { show(rules.explain(state.timelines, words)); results.prepend(keptNote()); } catch (err) { forget(); }
    } else if (state && state.kind === "server" && state.html && typeof state.html[lang] === "string") {
      results.innerHTML = state.html[lang];  // this server's own markup, kept by this page
      results.prepend(keptNote());
      drawSent(state.drawing);
    }
  }

  var maxUpload = parseInt(form.getAttribute("data-max-upload"), 10);
  form.addEventListener("submit", function (event) {
    var size = Array.from(input.files || []).reduce(function (total, f) { return total + f.size; }, 0);
    if (server.checked && size <= maxUpload) { forget(); return; }  // posted: the server answers with the results
    event.preventDefault();
    if (server.checked) {  // not sent: the server would refuse it once sent
      fail(say(words.too_large, { size: number(size / 1048576, 1), mib: number(maxUpload / 1048576, 0) }));
      return;
    }
    analyse();
  });
  input.addEventListener("change", function () { if (!server.checked && input.files.length) analyse(); });
})();
