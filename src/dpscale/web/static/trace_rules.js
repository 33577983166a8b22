// The rules of dpscale.explain in the browser, for /explain (static/explain.js draws the page).
//
// They MIRROR the Python core, dpscale/explain: reading.py (what is a step, compute and
// communication; the sweep of a thread's nested events), intervals.py (union, difference, length
// in a window), timeline.py (one step as drawn) and breakdown.py (the split per step, the slowest rank, the wait, the efficiency,
// the levers), function for function. tests/browser/test_explain_page.py loads the same files here
// and into dpscale.explain.explain and checks that every number agrees: change both together.
//
// readTrace(file, words, most) reads one File (gzip through DecompressionStream) into its steps
// and the unions of its compute and communication, dropping its JSON before it resolves, and
// refuses more than ``most`` characters; explain(timelines, words) gives the breakdown. Errors
// are Refused, their text from ``words`` (the page's language).
window.dpscaleTraces = (function () {
  "use strict";
  var words = {}, localMost = Infinity, shownMost = "";
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
            throw notTrace(say(words.too_long, { most: shownMost }));
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

  // -- timeline.py ----------------------------------------------------------------------------
  function within(timeline, low, high) {
    return timeline.filter(function (iv) { return iv[1] > low && iv[0] < high; })
      .map(function (iv) { return [(Math.max(iv[0], low) - low) * US, (Math.min(iv[1], high) - low) * US]; });
  }

  function stepDrawing(t, index) {  // one rank's step from its start: compute and exposed intervals (seconds)
    var s = t.steps[index];
    return { step: s[0], length: (s[2] - s[1]) * US, compute: within(t.compute, s[1], s[2]),
      exposed: within(difference(t.communication, t.compute), s[1], s[2]) };
  }

  // -- breakdown.py ----------------------------------------------------------------------------
  function mean(values) { return values.reduce(function (a, b) { return a + b; }, 0) / values.length; }
  function spread(values) {
    var m = mean(values);
    var sd = values.length > 1 ? Math.sqrt(mean(values.map(function (v) { return (v - m) * (v - m); }))) : 0;
    return { mean: m, sd: sd, low: Math.min.apply(null, values), high: Math.max.apply(null, values) };
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
      var row = {
        rank: ranks[i], steps: s.step.length, step_time: spread(s.step), compute: spread(s.compute),
        exposed_communication: spread(s.exposed),
        other: spread(zip(s.work, s.compute, function (w, c) { return Math.max(0, w - c); })),
        communication: spread(s.communication),
        wait: spread(zip(most, s.work, function (m, w) { return m - w; })),
        overlap: communication > 0 ? Math.min(1, Math.max(0, hidden / communication)) : null
      };
      row.work = row.compute.mean + row.other.mean;  // RankBreakdown.work: the step alone on one device
      row.exposed_wait = Math.min(row.wait.mean, row.exposed_communication.mean);  // RankBreakdown.exposed_wait
      return row;
    });
    var rankWorks = rows.map(function (r) { return r.work; });
    var total = splits.reduce(function (a, s) { return a + s.step.reduce(function (x, y) { return x + y; }, 0); }, 0);
    var worked = works.reduce(function (a, w) { return a + w.reduce(function (x, y) { return x + y; }, 0); }, 0);
    var pooled = [].concat.apply([], works);
    var meanWork = mean(pooled);
    var slow = rows[slowest];
    var perStep = mean(splits[slowest].sizes);
    var meanOfRanks = most.map(function (_, j) { return mean(works.map(function (w) { return w[j]; })); });
    var compute = mean(rows.map(function (r) { return r.compute.mean; }));
    var other = mean(rows.map(function (r) { return r.other.mean; }));
    var perStepBytes = perStep > 0 ? perStep : null;
    var calibration = {
      devices: rows.length, compute_time: compute, other_time: other,
      single_device_step: compute + other,
      exposed_communication: slow.exposed_communication.mean, overlap: slow.overlap, collective_bytes: perStepBytes,
      communication_time: slow.communication.mean,
      straggler_wait: mean(zip(most, meanOfRanks, function (m, w) { return m - w; })),
      step_time_cv: pooled.length > 1 && meanWork > 0 ? spread(pooled).sd / meanWork : 0,
      bandwidth: perStep > 0 && slow.communication.mean > 0 && isFinite(perStep / slow.communication.mean) ? perStep / slow.communication.mean : null
    };
    var stepTime = mean(rows.map(function (r) { return r.step_time.mean; }));
    var savings = [["balance", calibration.straggler_wait], ["communication", slow.exposed_communication.mean], ["host", slow.other.mean]];
    var levers = savings.filter(function (s) { return s[1] > 0; }).map(function (s) {
      return { name: s[0], saving: s[1], speedup: stepTime > s[1] ? stepTime / (stepTime - s[1]) : null };
    }).sort(function (a, b) { return b.saving - a.saving; });
    return {
      ranks: rows, timelines: timelines, slowest: slowest, slowest_rank: ranks[slowest], step_time: stepTime,
      work_range: [Math.min.apply(null, rankWorks), Math.max.apply(null, rankWorks)],  // Explanation.work_range
      efficiency: total > 0 ? worked / total : 1, calibration: calibration, levers: levers, notes: notes
    };
  }

  // -- predict/traced.py's split and predict/linked.py's traced_text: the link to /predict ----------
  var SAME_RANK = 1e-9;
  function variance(values) { var m = mean(values); return mean(values.map(function (v) { return (v - m) * (v - m); })); }
  function splitVariation(c, ranks) {
    var cv = c.step_time_cv;
    if (ranks.length < 2) return [cv, null, null];
    var works = ranks.map(function (r) { return r.compute.mean + r.other.mean; });
    var m = mean(works), slowest = 0;
    works.forEach(function (w, i) { if (w > works[slowest]) slowest = i; });
    if (m <= 0 || ranks[slowest].wait.high > SAME_RANK * m) return [cv, null, null];
    var within = Math.max(0, (cv * m) * (cv * m) - variance(works));
    return [Math.sqrt(within) / m, (works[slowest] - m) / m, ranks[slowest].rank];
  }
  function tracedText(found) {
    var c = found.calibration, v = splitVariation(c, found.ranks);
    var fields = [["n", c.devices], ["c", c.compute_time], ["o", c.other_time], ["s", c.single_device_step],
      ["m", c.communication_time], ["x", c.exposed_communication], ["v", c.overlap], ["y", c.collective_bytes],
      ["b", c.bandwidth], ["w", c.straggler_wait], ["j", c.step_time_cv], ["r", v[0]], ["f", v[1]], ["k", v[2]]];
    return ["t1"].concat(fields.filter(function (f) { return f[1] !== null; }).map(function (f) {
      return f[0] + String(f[1]).replace("e+", "e");
    })).join("_");
  }

  return {
    Refused: Refused,
    say: say,
    stepDrawing: stepDrawing,
    tracedText: tracedText,
    readTrace: function (file, given, most, shown) { words = given; localMost = most; shownMost = shown; return readTrace(file); },
    explain: function (timelines, given) { words = given; return explain(timelines); }
  };
})();
