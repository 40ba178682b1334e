// passatk report: the per-problem table (sort, filter, lazy rows) and the sample viewer.
// Plain browser JavaScript, no library, no network: the data are the JSON blocks in this page.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("passatk-data").textContent);
  var programs = JSON.parse(document.getElementById("passatk-programs").textContent);
  var details = JSON.parse(document.getElementById("passatk-details").textContent);
  var PAGE = 300;
  var state = { model: 0, sort: null, dir: 1, filter: "", show: "all", limit: PAGE, rows: [], open: null };

  function $(id) { return document.getElementById(id); }
  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  function fmt(v, d) { return v === null || v === undefined ? "-" : v.toFixed(d); }

  // ------------------------------------------------------------------ highlighting
  var PY_KW = ("False None True and as assert async await break class continue def del elif else except finally for from " +
    "global if import in is lambda nonlocal not or pass raise return try while with yield match case").split(" ");
  var PY_BI = ("abs all any bin bool bytes callable chr dict dir divmod enumerate filter float format frozenset getattr hasattr " +
    "hash hex id input int isinstance issubclass iter len list map max min next object oct open ord pow print range repr " +
    "reversed round set setattr slice sorted str sum super tuple type zip self cls Exception ValueError TypeError KeyError " +
    "IndexError AssertionError").split(" ");
  var C_KW = ("auto bool break case catch char class const continue default delete do double else enum extern false final float " +
    "fn for func go if impl import int interface let long loop match mod mut namespace new nil null package private protected " +
    "public pub return self short static struct super switch template this throw true try type typedef typename union unsigned " +
    "use using var void volatile where while def string vector std include define").split(" ");
  var sets = { py: [new Set(PY_KW), new Set(PY_BI)], c: [new Set(C_KW), new Set()] };
  var PY_RE = /(#[^\n]*)|([rRbBuUfF]{0,2}(?:"""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?))|(\b0[xXoObB][\da-fA-F_]+\b|\b\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?j?\b)|(@[A-Za-z_][\w.]*)|([A-Za-z_]\w*)/g;
  var C_RE = /(\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|^\s*#[^\n]*)|("(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?|`[^`]*`?)|(\b0[xXbB][\da-fA-F_]+\b|\b\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?[fFlLuU]*\b)|(@[A-Za-z_]\w*)|([A-Za-z_]\w*)/gm;

  function language(src) {
    if (/^\s*(def|class|import|from)\s/m.test(src) || /:\s*\n\s+/.test(src)) return "py";
    return /[;{}]\s*\n/.test(src) ? "c" : "py";
  }
  function highlight(src) {
    var lang = language(src), re = lang === "py" ? PY_RE : C_RE, kw = sets[lang][0], bi = sets[lang][1];
    var out = "", last = 0, prev = "", m;
    re.lastIndex = 0;
    while ((m = re.exec(src)) !== null) {
      if (m[0] === "") { re.lastIndex++; continue; }
      out += esc(src.slice(last, m.index));
      var t = m[0], cls = "";
      if (m[1]) cls = "hl-c";
      else if (m[2]) cls = "hl-s";
      else if (m[3]) cls = "hl-n";
      else if (m[4]) cls = "hl-d";
      else if (kw.has(t)) cls = "hl-k";
      else if (prev === "def" || prev === "class" || prev === "fn" || prev === "func") cls = "hl-f";
      else if (bi.has(t)) cls = "hl-b";
      out += cls ? '<span class="' + cls + '">' + esc(t) + "</span>" : esc(t);
      if (m[5]) prev = t;
      last = re.lastIndex;
    }
    return out + esc(src.slice(last));
  }

  // ------------------------------------------------------------------ the problem table
  var model = function () { return data.models[state.model]; };
  function columns() {
    var cols = [
      { key: "task", label: "problem", get: function (m, i) { return m.ids[i]; }, text: true },
      { key: "n", label: "n", get: function (m, i) { return m.n[i]; } },
      { key: "c", label: "c", get: function (m, i) { return m.c[i]; } },
      { key: "rate", label: "solve rate", get: function (m, i) { return m.c[i] / m.n[i]; } }
    ];
    data.ks.forEach(function (k, j) {
      cols.push({ key: "pass" + k, label: "pass@" + k, get: function (m, i) { return m.pass[i][j]; } });
    });
    cols.push({ key: "rank", label: "rank", get: function (m, i) { return m.rank[i]; } });
    return cols;
  }
  var COLS = columns();

  function selectRows() {
    var m = model(), f = state.filter.toLowerCase(), rows = [];
    for (var i = 0; i < m.ids.length; i++) {
      if (f && m.ids[i].toLowerCase().indexOf(f) < 0) continue;
      if (state.show === "never" && m.c[i] !== 0) continue;
      if (state.show === "always" && m.c[i] !== m.n[i]) continue;
      if (state.show === "some" && (m.c[i] === 0 || m.c[i] === m.n[i])) continue;
      rows.push(i);
    }
    if (state.sort !== null) {
      var col = COLS[state.sort], dir = state.dir;
      rows.sort(function (a, b) {
        var x = col.get(m, a), y = col.get(m, b);
        var d = col.text ? String(x).localeCompare(String(y), undefined, { numeric: true }) : x - y;
        return d !== 0 ? dir * d : a - b;
      });
    }
    state.rows = rows;
  }

  function renderHead() {
    var tr = COLS.map(function (c, j) {
      var cls = state.sort === j ? (state.dir > 0 ? "sorted-asc" : "sorted-desc") : "";
      return '<th data-col="' + j + '" data-key="' + c.key + '" class="' + cls + '" title="sort by ' + esc(c.label) + '">' +
        esc(c.label) + "</th>";
    }).join("");
    document.querySelector("#problem-table thead").innerHTML = "<tr>" + tr + "</tr>";
  }

  function renderBody() {
    var m = model(), shown = state.rows.slice(0, state.limit), html = [];
    for (var r = 0; r < shown.length; r++) {
      var i = shown[r], rate = m.c[i] / m.n[i];
      var cells = '<td class="task">' + esc(m.ids[i]) + '</td><td class="num" data-value="' + m.n[i] + '">' + m.n[i] +
        '</td><td class="num" data-value="' + m.c[i] + '">' + m.c[i] + '</td><td class="num" data-value="' + rate + '">' +
        (100 * rate).toFixed(1) + '%<span class="bar" style="width:' + Math.round(40 * rate) + 'px"></span></td>';
      for (var j = 0; j < data.ks.length; j++) {
        cells += '<td class="num" data-value="' + m.pass[i][j] + '">' + fmt(m.pass[i][j], 4) + "</td>";
      }
      cells += '<td class="num" data-value="' + m.rank[i] + '">' + m.rank[i] + "</td>";
      var cls = (m.c[i] === 0 ? "never" : "") + (state.open && state.open[0] === state.model && state.open[1] === i ? " selected" : "");
      html.push('<tr data-index="' + i + '" data-task="' + esc(m.ids[i]) + '" class="' + cls + '">' + cells + "</tr>");
    }
    document.querySelector("#problem-table tbody").innerHTML = html.join("");
    var rest = state.rows.length - shown.length;
    $("more").hidden = rest <= 0;
    $("more").textContent = "show " + Math.min(rest, PAGE) + " more (" + rest + " not shown)";
    var never = 0;
    for (var k = 0; k < m.c.length; k++) if (m.c[k] === 0) never++;
    $("count").textContent = "showing " + shown.length + " of " + state.rows.length + " matching (" + m.ids.length +
      " problems, " + never + " never solved)";
  }

  function refresh(resetLimit) {
    if (resetLimit) state.limit = PAGE;
    selectRows();
    renderHead();
    renderBody();
  }

  // ------------------------------------------------------------------ the sample viewer
  function statusBadge(s) {
    return '<span class="badge status" style="background:var(--' + s + ')">' + esc(s) + "</span>";
  }
  function openViewer(mi, i) {
    var m = data.models[mi], smp = data.samples[mi];
    state.open = [mi, i];
    $("viewer").hidden = false;
    $("viewer-title").textContent = m.ids[i] + (data.models.length > 1 ? " \u2014 " + m.name : "");
    var head = '<div class="meta"><span>' + m.c[i] + " of " + m.n[i] + " samples passed</span>";
    data.ks.forEach(function (k, j) { head += "<span>pass@" + k + " = " + fmt(m.pass[i][j], 4) + "</span>"; });
    head += "<span>rank " + m.rank[i] + "</span></div>";
    if (!smp) {
      $("viewer-strip").innerHTML = "";
      $("viewer-sample").innerHTML = head + '<p class="note">This file holds verdicts only: no programs to show.</p>';
      renderBody();
      return;
    }
    var lo = smp.start[i], hi = smp.start[i + 1], strip = [], tally = {};
    for (var s = lo; s < hi; s++) {
      var st = data.statuses[smp.status[s]];
      tally[st] = (tally[st] || 0) + 1;
      strip.push('<button type="button" data-sample="' + s + '" style="background:var(--' + st + ')" title="sample ' +
        (s - lo + 1) + ": " + st + '"></button>');
    }
    $("viewer-strip").innerHTML = strip.join("");
    head += '<div class="meta tally">' + data.statuses.filter(function (x) { return tally[x]; }).map(function (x) {
      return '<span><span class="swatch" style="background:var(--' + x + ')"></span>' + tally[x] + " " + esc(x) + "</span>";
    }).join("") + "</div>";
    $("viewer-strip").dataset.head = head;
    var first = lo;
    for (var t = lo; t < hi; t++) { if (data.statuses[smp.status[t]] !== "passed") { first = t; break; } }
    showSample(mi, i, first);
    renderBody();
  }
  function showSample(mi, i, s) {
    var smp = data.samples[mi], lo = smp.start[i], st = data.statuses[smp.status[s]];
    var buttons = $("viewer-strip").querySelectorAll("button");
    for (var b = 0; b < buttons.length; b++) buttons[b].classList.toggle("current", +buttons[b].dataset.sample === s);
    var detail = details[smp.detail[s]];
    var html = $("viewer-strip").dataset.head + '<div class="meta sample-meta"><strong>sample ' + (s - lo + 1) + " of " +
      (smp.start[i + 1] - lo) + "</strong>" + statusBadge(st) +
      (smp.dur[s] === null ? "" : '<span class="duration">' + (smp.dur[s] * 1000).toFixed(1) + " ms wall</span>") +
      (smp.cpu[s] === null ? "" : "<span>" + (smp.cpu[s] * 1000).toFixed(1) + " ms CPU</span>") +
      '<span class="sub">line ' + smp.line[s] + " of the results file</span></div>";
    if (detail) html += "<h3>first failing test or error</h3><pre class=\"detail\">" + esc(detail) + "</pre>";
    html += '<h3>program</h3><pre class="program"><code>' + highlight(programs[smp.prog[s]]) + "</code></pre>";
    $("viewer-sample").innerHTML = html;
    $("viewer-sample").dataset.sample = String(s);
  }
  function closeViewer() {
    $("viewer").hidden = true;
    state.open = null;
    renderBody();
  }

  // ------------------------------------------------------------------ wiring
  var pick = $("model");
  data.models.forEach(function (m, j) {
    var o = document.createElement("option");
    o.value = String(j);
    o.textContent = m.name;
    pick.appendChild(o);
  });
  $("model-pick").hidden = data.models.length < 2;
  pick.addEventListener("change", function () { state.model = +pick.value; refresh(true); });
  $("filter").addEventListener("input", function (e) { state.filter = e.target.value; refresh(true); });
  $("show").addEventListener("change", function (e) { state.show = e.target.value; refresh(true); });
  $("more").addEventListener("click", function () { state.limit += PAGE; renderBody(); });
  document.querySelector("#problem-table thead").addEventListener("click", function (e) {
    var th = e.target.closest("th");
    if (!th) return;
    var j = +th.dataset.col;
    if (state.sort === j) state.dir = -state.dir;
    else { state.sort = j; state.dir = COLS[j].text ? 1 : -1; }
    refresh(false);
  });
  document.querySelector("#problem-table tbody").addEventListener("click", function (e) {
    var tr = e.target.closest("tr");
    if (tr) openViewer(state.model, +tr.dataset.index);
  });
  $("viewer-strip").addEventListener("click", function (e) {
    var b = e.target.closest("button");
    if (b && state.open) showSample(state.open[0], state.open[1], +b.dataset.sample);
  });
  $("viewer-close").addEventListener("click", closeViewer);
  document.addEventListener("keydown", function (e) { if (e.key === "Escape" && !$("viewer").hidden) closeViewer(); });
  document.addEventListener("click", function (e) {
    var a = e.target.closest("a.open");
    if (!a) return;
    e.preventDefault();
    var mi = data.models.findIndex(function (m) { return m.name === a.dataset.model; });
    var i = mi < 0 ? -1 : data.models[mi].ids.indexOf(a.dataset.task);
    if (i < 0) return;
    state.model = mi;
    pick.value = String(mi);
    refresh(true);
    openViewer(mi, i);
  });

  refresh(true);
  document.body.dataset.ready = "1";
  if (window.performance && performance.mark) performance.mark("passatk-ready");
})();
