// /explain in the browser: the chosen trace files are read here and nothing is sent, unless
// "Analyse on the server" is ticked (then the form posts them, as it does without JavaScript).
//
// The rules MIRROR the Python core, dpscale/explain: reading.py (what is a step, compute and
// communication; the sweep of a thread's nested events), intervals.py (union, difference, length
// in a window) and breakdown.py (the split per step, the slowest rank, the wait, the efficiency,
// the levers). tests/browser/test_explain_page.py loads the same files here and into
// dpscale.explain.explain and checks that the numbers agree: change both together.
//
// Files are read one at a time (gzip through DecompressionStream), each reduced to its steps and
// the unions of its compute and communication before the next is opened, so that one file's
// JSON at most is held at once; a file of more than data-local-most characters is refused.
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

  // -- reading.py ------------------------------------------------------------------------------
  var OP = 0, ANNOTATION = 1, COLLECTIVE = 2, KERNEL = 3, NCCL = 4, STEP = 5;
  var DEVICE = new Set(["kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"]);
  var OPERATOR = new Set(["cpu_op", "operator"]);
  var COLLECTIVES = ["gloo:", "nccl", "c10d::", "_c10d_functional::", "c10d_functional::", "record_param_comms", "ucc:", "mpi:"];
  var ITEM_BYTES = { float: 4, float32: 4, half: 2, float16: 2, bfloat16: 2, double: 8, float64: 8, int: 4, int32: 4,
    long: 8, int64: 8, byte: 1, char: 1, uint8: 1, int8: 1, bool: 1, short: 2, int16: 2 };
  var LONGEST = 1e15;
  var US = 1e-6;
  var SKIP = {};  // thrown for an event that cannot be read: it is counted and left out
  var OUT_OF_ORDER = {};

  function Refused(text) { this.text = text; }

  function say(template, values) {
    return template.replace(/%\((\w+)\)s/g, function (_, key) { return String(values[key]); });
  }

  function kindOf(name, cat) {
    if (typeof name !== "string" || (cat !== null && typeof cat === "object")) throw SKIP;  // unhashable in Python
    var category = typeof cat === "string" ? cat.toLowerCase() : "";
    if (name.startsWith("ProfilerStep#")) return category.startsWith("gpu") ? ANNOTATION : STEP;
    var lower = name.toLowerCase();
    if (DEVICE.has(category)) return lower.indexOf("nccl") >= 0 ? NCCL : KERNEL;
    for (var i = 0; i < COLLECTIVES.length; i++) if (lower.startsWith(COLLECTIVES[i])) return COLLECTIVE;
    return OPERATOR.has(category) ? OP : ANNOTATION;
  }

  function time(value) {  // Python's value * 1.0: a number (or a bool), else the event is skipped
    if (typeof value === "number") return value;
    if (typeof value === "boolean") return value ? 1 : 0;
    throw SKIP;
  }

  function key(value) {  // a thread's pid or tid as a dict key: objects are not hashable in Python
    if (value !== null && typeof value === "object") throw SKIP;
    return JSON.stringify(value === undefined ? null : value);
  }

  function Sweep() { this.busy = []; this.stack = []; this.now = 0; this.last = [-Infinity, 0]; this.disordered = false; }
  Sweep.prototype.push = function (start, end, kind) {
    if (this.disordered) return;
    if (start < this.last[0] || (start === this.last[0] && -end < this.last[1])) { this.disordered = true; return; }
    this.last = [start, -end];
    var stack = this.stack;
    while (stack.length && stack[stack.length - 1][0] <= start) this.close();
    if (stack.length) {
      var top = stack[stack.length - 1];
      if (top[1] === COLLECTIVE || (top[1] === OP && kind === OP)) return;
      if (top[1] === OP) this.mark(this.now, start);
      end = Math.min(end, top[0]);
    }
    this.now = start;
    stack.push([end, kind]);
  };
  Sweep.prototype.close = function () {
    var closed = this.stack.pop();
    if (closed[1] === OP) this.mark(this.now, closed[0]);
    this.now = closed[0];
  };
  Sweep.prototype.mark = function (start, end) {
    var busy = this.busy;
    if (end > start) {
      if (busy.length && busy[busy.length - 1][1] >= start) busy[busy.length - 1] = [busy[busy.length - 1][0], end];
      else busy.push([start, end]);
    }
  };
  Sweep.prototype.done = function () { while (this.stack.length) this.close(); return this.busy; };

  function size(event, start, sizes) {
    var args = event.args;
    if (!args || typeof args !== "object" || Array.isArray(args)) return;
    var count = args["In msg nelems"], dtype = args.dtype;
    var item = typeof dtype === "string" ? ITEM_BYTES[dtype.toLowerCase()] : undefined;
    if (item !== undefined && typeof count === "number" && count > 0 && count < 1e15) sizes.push([start, count * item]);
  }

  function reduce(file, doc, inOrder) {
    var events = Array.isArray(doc) ? doc : Array.isArray(doc.traceEvents) ? doc.traceEvents : [];
    var sweeps = new Map(), kept = new Map(), steps = new Map();
    var kernels = [], nccl = [], collectives = [], hostSizes = [], deviceSizes = [];
    var skipped = 0;
    for (var i = 0; i < events.length; i++) {
      var event = events[i];
      try {
        if (event === null || typeof event !== "object" || Array.isArray(event)) throw SKIP;
        if (event.ph !== "X") continue;
        if (!("name" in event)) throw SKIP;
        var start = time(event.ts);
        var end = start + time(event.dur);
        if (!(end - start >= 0 && end - start < LONGEST)) throw SKIP;
        var kind = kindOf(event.name, event.cat);
        if (kind <= COLLECTIVE) {
          var thread = key(event.pid) + "," + key(event.tid);
          if (inOrder) {
            if (!sweeps.has(thread)) sweeps.set(thread, new Sweep());
            sweeps.get(thread).push(start, end, kind);
          } else {
            if (!kept.has(thread)) kept.set(thread, []);
            kept.get(thread).push([start, -end, kind]);
          }
          if (kind === COLLECTIVE) { collectives.push([start, end]); size(event, start, hostSizes); }
        } else if (kind === KERNEL) {
          kernels.push([start, end]);
        } else if (kind === NCCL) {
          nccl.push([start, end]);
          size(event, start, deviceSizes);
        } else {
          var digits = event.name.slice("ProfilerStep#".length);
          if (!/^\s*[+-]?\d+(_\d+)*\s*$/.test(digits)) throw SKIP;
          var number = parseInt(digits.replace(/_/g, ""), 10);
          var where = key(event.pid) + "," + key(event.tid);
          if (!steps.has(number)) steps.set(number, [start, end, where]);
        }
      } catch (err) {
        if (err !== SKIP) throw err;
        skipped += 1;
      }
    }
    kept.forEach(function (held, thread) {
      var sweep = new Sweep();
      held.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1] || a[2] - b[2]; });
      held.forEach(function (e) { sweep.push(e[0], -e[1], e[2]); });
      sweeps.set(thread, sweep);
    });
    if (!steps.size) throw new Refused(say(words.no_steps, { file: file }));
    var info = Array.isArray(doc) ? null : doc.distributedInfo;
    var whole = function (v) { return Number.isInteger(v) && v >= 0 && v < 2147483648 ? v : null; };
    var ordered = [];
    steps.forEach(function (s, n) { ordered.push([n, s[0], s[1]]); });
    ordered.sort(function (a, b) { return a[1] - b[1]; });
    var device = kernels.length > 0 || nccl.length > 0;
    var compute, communication, sizes;
    if (device) {
      compute = union(kernels); communication = union(nccl); sizes = deviceSizes;
    } else {
      var busy = [];
      new Set(Array.from(steps.values(), function (s) { return s[2]; })).forEach(function (thread) {
        var sweep = sweeps.get(thread);
        if (!sweep) return;
        if (sweep.disordered) throw OUT_OF_ORDER;
        busy.push.apply(busy, sweep.done());
      });
      compute = union(busy); communication = union(collectives); sizes = hostSizes;
    }
    sizes.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    return {
      file: file,
      rank: info && typeof info === "object" ? whole(info.rank) : null,
      world: info && typeof info === "object" ? whole(info.world_size) : null,
      steps: ordered, compute: compute, communication: communication, sizes: sizes, device: device, skipped: skipped
    };
  }

  function readTrace(file) {
    var notTrace = function (reason) { return new Refused(say(words.not_trace, { file: file.name, reason: reason })); };
    return file.slice(0, 2).arrayBuffer().then(function (head) {
      var magic = new Uint8Array(head);
      var zipped = magic.length === 2 && magic[0] === 0x1f && magic[1] === 0x8b;
      var stream = file.stream();
      if (zipped) {
        if (!window.DecompressionStream) throw new Refused(words.no_gzip);
        stream = stream.pipeThrough(new DecompressionStream("gzip"));
      }
      var reader = stream.pipeThrough(new TextDecoderStream("utf-8", { fatal: true })).getReader();
      var parts = [], length = 0;
      var pump = function () {
        return reader.read().then(function (piece) {
          if (piece.done) return parts.join("");
          length += piece.value.length;
          if (length > localMost) {
            reader.cancel();
            throw notTrace(say(words.too_long, { most: number(localMost, 0) }));
          }
          parts.push(piece.value);
          return pump();
        });
      };
      return pump().catch(function (err) {
        throw err instanceof Refused ? err : notTrace(zipped ? words.bad_gzip : words.not_json);
      });
    }).then(function (text) {
      var doc;
      try { doc = JSON.parse(text); } catch (err) { throw notTrace(words.not_json); }
      text = null;
      if (doc === null || typeof doc !== "object") throw notTrace(words.not_json);
      if (!Array.isArray(doc) && !("traceEvents" in doc)) throw notTrace(words.no_events);
      try {
        return reduce(file.name, doc, true);
      } catch (err) {
        if (err === OUT_OF_ORDER) return reduce(file.name, doc, false);
        throw err;
      }
    });
  }

  // -- intervals.py ----------------------------------------------------------------------------
  function union(intervals) {
    var sorted = intervals.slice().sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    var merged = [];
    sorted.forEach(function (iv) {
      if (iv[1] <= iv[0]) return;
      var last = merged[merged.length - 1];
      if (last && iv[0] <= last[1]) { if (iv[1] > last[1]) merged[merged.length - 1] = [last[0], iv[1]]; }
      else merged.push([iv[0], iv[1]]);
    });
    return merged;
  }

  function difference(kept, removed) {
    var out = [], j = 0, count = removed.length;
    kept.forEach(function (iv) {
      var start = iv[0], end = iv[1];
      while (j < count && removed[j][1] <= start) j++;
      for (var k = j; k < count && removed[k][0] < end; k++) {
        if (removed[k][0] > start) out.push([start, removed[k][0]]);
        start = Math.max(start, removed[k][1]);
        if (start >= end) break;
      }
      if (start < end) out.push([start, end]);
    });
    return out;
  }

  function lengthsIn(timeline, windows) {
    var out = [], i = 0, count = timeline.length;
    windows.forEach(function (w) {
      while (i < count && timeline[i][1] <= w[0]) i++;
      var total = 0;
      for (var k = i; k < count && timeline[k][0] < w[1]; k++) total += Math.min(timeline[k][1], w[1]) - Math.max(timeline[k][0], w[0]);
      out.push(total);
    });
    return out;
  }

  function clip(timeline, low, high) {  // the timeline's parts inside [low, high], for the drawing
    return timeline.filter(function (iv) { return iv[1] > low && iv[0] < high; })
      .map(function (iv) { return [Math.max(iv[0], low), Math.min(iv[1], high)]; });
  }

  // -- breakdown.py ----------------------------------------------------------------------------
  function mean(values) { return values.reduce(function (a, b) { return a + b; }, 0) / values.length; }
  function spread(values) {
    var m = mean(values);
    var sd = values.length > 1 ? Math.sqrt(mean(values.map(function (v) { return (v - m) * (v - m); }))) : 0;
    return { mean: m, sd: sd };
  }
  function zip(a, b, f) { return a.map(function (x, i) { return f(x, b[i]); }); }

  function split(t) {
    var windows = t.steps.map(function (s) { return [s[1], s[2]]; });
    var exposed = difference(t.communication, t.compute);
    var sizes = windows.map(function () { return 0; });
    var j = 0;
    t.sizes.forEach(function (s) {  // each collective counts in the step it starts in
      while (j + 1 < windows.length && windows[j + 1][0] <= s[0]) j++;
      if (windows[j][0] <= s[0] && s[0] < windows[j][1]) sizes[j] += s[1];
    });
    var us = function (x) { return x * US; };
    var s = {
      step: windows.map(function (w) { return (w[1] - w[0]) * US; }),
      compute: lengthsIn(t.compute, windows).map(us),
      exposed: lengthsIn(exposed, windows).map(us),
      communication: lengthsIn(t.communication, windows).map(us),
      sizes: sizes
    };
    s.work = zip(s.step, s.exposed, function (a, b) { return a - b; });
    return s;
  }

  function explain(timelines) {
    var notes = [];
    var ranks = timelines.map(function (t) { return t.rank; }).filter(function (r) { return r !== null; });
    if (new Set(ranks).size !== timelines.length) {
      var seen = new Map();
      timelines.forEach(function (t) {
        if (t.rank !== null && seen.has(t.rank)) throw new Refused(say(words.same_rank, { file: t.file, rank: t.rank, other: seen.get(t.rank) }));
        seen.set(t.rank, t.file);
      });
      notes.push(words.unnumbered);
      ranks = timelines.map(function (_, i) { return i; });
    }
    var order = ranks.map(function (_, i) { return i; }).sort(function (a, b) { return ranks[a] - ranks[b]; });
    timelines = order.map(function (i) { return timelines[i]; });
    ranks = order.map(function (i) { return ranks[i]; });
    var numbers = timelines[0].steps.map(function (s) { return s[0]; }).join(",");
    timelines.slice(1).forEach(function (t) {
      if (t.steps.map(function (s) { return s[0]; }).join(",") !== numbers) throw new Refused(say(words.steps_differ, { file: t.file, other: timelines[0].file }));
    });
    var worlds = new Set(timelines.map(function (t) { return t.world; }).filter(function (w) { return w !== null; }));
    if (worlds.size === 1 && Array.from(worlds)[0] !== timelines.length) notes.push(say(words.partial, { read: timelines.length, world: Array.from(worlds)[0] }));
    timelines.forEach(function (t) { if (t.skipped) notes.push(say(words.skipped, { file: t.file, count: t.skipped })); });
    var splits = timelines.map(split);
    var works = splits.map(function (s) { return s.work; });
    var most = works[0].map(function (_, j) { return Math.max.apply(null, works.map(function (w) { return w[j]; })); });
    var slowest = 0;
    works.forEach(function (w, i) { if (mean(w) > mean(works[slowest])) slowest = i; });
    var rows = splits.map(function (s, i) {
      var communication = s.communication.reduce(function (a, b) { return a + b; }, 0);
      var hidden = communication - s.exposed.reduce(function (a, b) { return a + b; }, 0);
      return {
        rank: ranks[i], steps: s.step.length, step_time: spread(s.step), compute: spread(s.compute),
        exposed_communication: spread(s.exposed),
        other: spread(zip(s.work, s.compute, function (w, c) { return Math.max(0, w - c); })),
        communication: spread(s.communication),
        wait: spread(zip(most, s.work, function (m, w) { return m - w; })),
        overlap: communication > 0 ? Math.min(1, Math.max(0, hidden / communication)) : null
      };
    });
    var total = splits.reduce(function (a, s) { return a + s.step.reduce(function (x, y) { return x + y; }, 0); }, 0);
    var worked = works.reduce(function (a, w) { return a + w.reduce(function (x, y) { return x + y; }, 0); }, 0);
    var pooled = [].concat.apply([], works);
    var meanWork = mean(pooled);
    var slow = rows[slowest];
    var perStep = mean(splits[slowest].sizes);
    var meanOfRanks = most.map(function (_, j) { return mean(works.map(function (w) { return w[j]; })); });
    var compute = mean(rows.map(function (r) { return r.compute.mean; }));
    var other = mean(rows.map(function (r) { return r.other.mean; }));
    var calibration = {
      single_device_step: compute + other,
      communication_time: slow.communication.mean,
      straggler_wait: mean(zip(most, meanOfRanks, function (m, w) { return m - w; })),
      step_time_cv: pooled.length > 1 && meanWork > 0 ? spread(pooled).sd / meanWork : 0,
      bandwidth: perStep > 0 && slow.communication.mean > 0 ? perStep / slow.communication.mean : null
    };
    var stepTime = mean(rows.map(function (r) { return r.step_time.mean; }));
    var savings = [["balance", calibration.straggler_wait], ["communication", slow.exposed_communication.mean], ["host", slow.other.mean]];
    var levers = savings.filter(function (s) { return s[1] > 0; }).map(function (s) {
      return { name: s[0], saving: s[1], speedup: stepTime > s[1] ? stepTime / (stepTime - s[1]) : null };
    }).sort(function (a, b) { return b.saving - a.saving; });
    return {
      ranks: rows, timelines: timelines, slowest: slowest, slowest_rank: ranks[slowest], step_time: stepTime,
      efficiency: total > 0 ? worked / total : 1, calibration: calibration, levers: levers, notes: notes
    };
  }

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
  function number(x, decimals) { return format(decimal(x, 0), { maximumFractionDigits: decimals }); }
  function percent(x) {
    var text = format(decimal(x, 0), { style: "percent", maximumFractionDigits: 1 });
    return lang === "fr" ? text.replace(/\s*%/, "\u00a0%") : text;  // as dpscale.format.format_percent
  }
  function ms(seconds) {  // three significant digits, as dpscale.format.format_milliseconds
    var value = seconds * 1000;
    var decimals = value > 0 ? Math.max(0, 2 - Math.floor(Math.log10(value))) : 0;
    return format(decimal(seconds, 3), { style: "unit", unit: "millisecond", unitDisplay: "short", maximumFractionDigits: decimals });
  }
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

  function show(found) {
    var c = found.calibration;
    var summary = [
      [words.slowest, number(found.slowest_rank, 0), found.slowest_rank, "slowest_rank"],
      [words.step_time, ms(found.step_time), found.step_time, "step_time"],
      [words.efficiency, percent(found.efficiency), found.efficiency, "efficiency"],
      [words.single, ms(c.single_device_step), c.single_device_step, "single_device_step"],
      [words.communication, ms(c.communication_time), c.communication_time, "communication_time"],
      [words.straggler, ms(c.straggler_wait), c.straggler_wait, "straggler_wait"],
      [words.cv, percent(c.step_time_cv), c.step_time_cv, "step_time_cv"]
    ];
    if (c.bandwidth !== null) summary.push([words.bandwidth, number(c.bandwidth / 1e9, 3) + " GB/s", c.bandwidth, "bandwidth"]);
    var dl = el("dl", { class: "results", id: "summary" }, summary.map(function (r) {
      return el("div", {}, [el("dt", {}, [r[0]]), el("dd", { "data-value": String(r[2]), "data-key": r[3] }, [r[1]])]);
    }));
    var rows = found.ranks.map(function (r, i) {
      var tr = el("tr", i === found.slowest ? { class: "current" } : {}, [
        cell(number(r.rank, 0), r.rank), cell(number(r.steps, 0), r.steps),
        cell(ms(r.step_time.mean) + " ± " + ms(r.step_time.sd), r.step_time.mean),
        cell(ms(r.compute.mean), r.compute.mean), cell(ms(r.exposed_communication.mean), r.exposed_communication.mean),
        cell(ms(r.other.mean), r.other.mean), cell(ms(r.wait.mean), r.wait.mean),
        cell(r.overlap === null ? "—" : percent(r.overlap), r.overlap)
      ]);
      return tr;
    });
    var parts = [dl, table("ranks", words.caption, [words.rank, words.steps, words.step, words.compute, words.exposed, words.other, words.wait, words.overlap], rows)];
    if (found.levers.length) {
      parts.push(table("levers", words.levers, [words.lever, words.saves, words.speedup], found.levers.map(function (l) {
        var td = cell(words[l.name === "communication" ? "lever_communication" : l.name]);
        td.className = "text";
        return el("tr", {}, [td, cell(ms(l.saving), l.saving), cell(l.speedup === null ? "—" : times(l.speedup), l.speedup)]);
      }), true));
    }
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

  function timelineFigure(found) {
    var steps = found.timelines[0].steps;
    var select = el("select", { id: "step-choice" }, steps.map(function (s, i) {
      var option = el("option", { value: String(i) }, [number(s[0], 0)]);
      if (i === steps.length - 1) option.selected = true;  // the last: past the warm-up
      return option;
    }));
    var holder = el("div", { id: "timeline-drawing" });
    var legend = el("ul", { class: "legend" }, [["compute", words.compute], ["exposed", words.exposed_long], ["other", words.other_long]].map(function (l) {
      return el("li", {}, [el("span", { class: "swatch " + l[0] }), l[1]]);
    }));
    var title = el("figcaption", { id: "timeline-title" });
    var figure = el("figure", { class: "timeline", id: "timeline" }, [
      title, el("label", { for: "step-choice" }, [words.step + " "]), select, holder, legend
    ]);
    var draw = function () {
      var index = parseInt(select.value, 10);
      title.textContent = say(words.timeline, { step: number(steps[index][0], 0) });
      holder.replaceChildren(drawing(found, index, holder.clientWidth || 640));
    };
    select.addEventListener("change", draw);
    var timer = null;
    window.addEventListener("resize", function () { clearTimeout(timer); timer = setTimeout(draw, 150); });
    setTimeout(draw, 0);  // once the figure is in the page and has a width
    return figure;
  }

  function drawing(found, index, width) {
    var rows = found.timelines;
    var band = rows.length <= 32 ? 22 : Math.max(4, Math.floor(704 / rows.length));
    var labelled = band >= 14;
    var left = labelled ? 64 : 8, right = 12, top = 6, axis = 26;
    var height = top + band * rows.length + axis;
    var longest = Math.max.apply(null, rows.map(function (t) { return t.steps[index][2] - t.steps[index][1]; })) || 1;
    var scale = (width - left - right) / longest;
    var label = say(words.timeline_alt, { step: number(rows[0].steps[index][0], 0) });
    var root = svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, role: "img", "aria-label": label });
    rows.forEach(function (t, r) {
      var low = t.steps[index][1], high = t.steps[index][2];
      var y = top + r * band;
      var bar = band - (labelled ? 6 : 1);
      root.append(svg("rect", { x: left, y: y, width: (high - low) * scale, height: bar, fill: COLOURS.other, class: "other" }));
      var parts = [["compute", clip(t.compute, low, high)], ["exposed", clip(difference(t.communication, t.compute), low, high)]];
      parts.forEach(function (p) {
        p[1].forEach(function (iv) {
          root.append(svg("rect", { x: left + (iv[0] - low) * scale, y: y, width: Math.max(0.5, (iv[1] - iv[0]) * scale), height: bar, fill: COLOURS[p[0]], class: p[0] }));
        });
      });
      if (labelled) {
        var name = say(words.rank_n, { rank: number(found.ranks[r].rank, 0) });
        root.append(svg("text", { x: left - 6, y: y + bar - 4, "text-anchor": "end", "font-size": 12, "font-weight": r === found.slowest ? 700 : 400 }, name));
      }
    });
    var base = top + band * rows.length;
    root.append(svg("line", { x1: left, x2: width - right, y1: base + 2, y2: base + 2, stroke: "#57606a" }));
    [0, 0.5, 1].forEach(function (f) {
      var x = left + f * (width - left - right);
      root.append(svg("text", { x: x, y: base + 18, "font-size": 12, "text-anchor": f === 0 ? "start" : f === 1 ? "end" : "middle" }, ms(f * longest * US)));
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
    error.hidden = true;
    var timelines = [];
    var next = function (i) {
      if (i === files.length) return Promise.resolve();
      results.replaceChildren(el("p", { class: "placeholder", id: "waiting" }, [say(words.reading, { file: files[i].name })]));
      return readTrace(files[i]).then(function (t) { timelines.push(t); return next(i + 1); });
    };
    next(0).then(function () { show(explain(timelines)); form.setAttribute("data-done", "local"); })
      .catch(function (err) { fail(err instanceof Refused ? err.text : String(err)); });
  }

  form.addEventListener("submit", function (event) {
    if (server.checked) return;  // posted: the server answers with the results filled in
    event.preventDefault();
    analyse();
  });
  input.addEventListener("change", function () { if (!server.checked && input.files.length) analyse(); });
})();
