/* report.html's item browser. Vanilla JS, no network. Every string from the data is put
   on the page with textContent or createTextNode, never as markup. */
"use strict";
(function () {
  const node = document.getElementById("vbw-data");
  const data = node ? JSON.parse(node.textContent) : null;
  if (!data || !data.items) return;
  const items = data.items.concat(data.rows || []);  // detailed first, then plain rows
  const $ = (id) => document.getElementById(id);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  const isRight = (st) => st.endsWith("/right");
  const stateClass = (st) => st === "excluded" ? "excluded" : st.replace("n/a", "na").replace("/", "-");
  const STATE_LABEL = { "valid/right": "V✓", "valid/wrong": "V✗", "invalid/right": "I✓",
    "invalid/wrong": "I✗", "n/a/right": "✓", "n/a/wrong": "✗", "excluded": "—" };
  function shortArm(key) {
    return key.replace(/^unconstrained$/, "free").replace(/^prompt_json/, "pj")
      .replace(/^constrained/, "c").replace(/^tool_call/, "tc")
      .replace(/^reason_then_constrain/, "rtc");
  }
  function badge(st) {
    const b = el("span", "st " + stateClass(st), STATE_LABEL[st] || st);
    b.title = st;
    return b;
  }

  /* -- filters ------------------------------------------------------------------------ */
  const filters = [{ label: "all items", test: () => true }];
  for (const arm of data.contract) {
    filters.push({ label: "wrong-but-valid: " + arm,
      test: (it) => !it.excluded && it.arms[arm].state === "valid/wrong" });
  }
  for (const [from, to] of data.comparisons) {
    filters.push({ label: from + " → " + to + ": right→wrong",
      test: (it) => !it.excluded && isRight(it.arms[from].state) && !isRight(it.arms[to].state) });
    filters.push({ label: from + " → " + to + ": wrong→right",
      test: (it) => !it.excluded && !isRight(it.arms[from].state) && isRight(it.arms[to].state) });
  }
  const recorded = data.arms.filter((a) => items.some((it) => it.arms[a].interventions));
  for (const arm of recorded) {  // issue 19: where the grammar changed the answer itself
    filters.push({ label: "intervention in the answer value: " + arm,
      test: (it) => !!it.arms[arm].interventions && it.arms[arm].interventions.iv_answer > 0 });
  }
  if (items.some((it) => it.fields_changed)) {  // issue 32: which field the arms read apart
    filters.push({ label: "a field changed between arms",
      test: (it) => !!it.fields_changed && it.fields_changed.length > 0 });
  }
  filters.push({ label: "excluded", test: (it) => !!it.excluded });
  filters.push({ label: "finish_reason=length (any arm)",
    test: (it) => data.arms.some((a) => it.arms[a].finish_reason === "length") });
  for (const arm of data.arms) {
    filters.push({ label: "finish_reason=length: " + arm,
      test: (it) => it.arms[arm].finish_reason === "length" });
  }
  const select = $("filter");
  filters.forEach((f, i) => {
    f.count = items.filter(f.test).length;
    const o = el("option", null, f.label + " (" + f.count + ")");
    o.value = String(i);
    o.dataset.label = f.label;
    select.appendChild(o);
  });

  /* -- search ------------------------------------------------------------------------- */
  const haystacks = new Map();
  function haystack(it) {
    let h = haystacks.get(it);
    if (h === undefined) {
      const parts = [it.id, it.gold || ""];
      for (const p of it.prompts || []) parts.push(p.s);
      for (const a of data.arms) {
        const v = it.arms[a];
        if (v.text) parts.push(v.text.s);
        if (v.answer) parts.push(v.answer);
      }
      h = parts.join("\u0000").toLowerCase();
      haystacks.set(it, h);
    }
    return h;
  }

  /* -- the item list ------------------------------------------------------------------ */
  const head = $("items-head");
  head.appendChild(el("th", null, "id"));
  for (const a of data.arms) {
    const th = el("th", null, shortArm(a));
    th.title = a;
    head.appendChild(th);
  }
  const tbody = $("rows");
  const rows = items.map((it, i) => {
    const tr = el("tr");
    tr.dataset.index = String(i);
    const idCell = el("td", "mono id", it.id);  // a long id is cut with an ellipsis
    idCell.title = it.id.length > 2000 ? it.id.slice(0, 2000) + "…" : it.id;
    tr.appendChild(idCell);
    for (const a of data.arms) {
      const td = el("td");
      td.dataset.arm = a;
      td.dataset.state = it.arms[a].state;
      td.appendChild(badge(it.arms[a].state));
      if (it.arms[a].finish_reason === "length") td.appendChild(el("span", "note", " ✂"));
      tr.appendChild(td);
    }
    tr.addEventListener("click", () => show(i));
    tbody.appendChild(tr);
    return tr;
  });

  function apply() {
    const f = filters[Number(select.value) || 0];
    const q = $("search").value.trim().toLowerCase();
    let shown = 0;
    items.forEach((it, i) => {
      const ok = f.test(it) && (!q || haystack(it).includes(q));
      rows[i].hidden = !ok;
      if (ok) shown++;
    });
    $("count").textContent = shown + " of " + items.length + " items shown" +
      (data.unlisted ? " (" + data.unlisted.toLocaleString("en") + " more items are in the " +
       "tables and ledger.csv but not listed here)" : "");
  }
  /* -- sorting by the strongest intervention (largest lp_wanted - lp_forced) ---------- */
  function strongest(it) {
    let best = -Infinity;
    for (const a of recorded) {
      const v = it.arms[a].interventions;
      if (v && v.iv_max !== undefined && v.iv_max > best) best = v.iv_max;
    }
    return best;
  }
  if (recorded.length) {
    const label = el("label", null, "Sort ");
    const sort = el("select");
    sort.id = "sort";
    for (const [value, text] of [["task", "task order"],
      ["strongest", "strongest intervention first"]]) {
      const o = el("option", null, text);
      o.value = value;
      sort.appendChild(o);
    }
    label.appendChild(sort);
    select.parentNode.after(label);
    sort.addEventListener("change", () => {
      const order = items.map((it, i) => i);
      if (sort.value === "strongest") {
        const key = items.map(strongest);
        order.sort((x, y) => (key[y] - key[x]) || (x - y));
      }
      for (const i of order) tbody.appendChild(rows[i]);
    });
  }
  select.addEventListener("change", apply);
  $("search").addEventListener("input", apply);

  /* -- the detail pane ---------------------------------------------------------------- */
  function ivText(m) {
    return "the model's choice `" + m.wanted + "` (p = " + m.pw + "), forced `" + m.forced +
      "` (p = " + m.pf + "); landed in " + m.where + (m.answer ? ", in the answer value" : "");
  }
  function ivMark(m, text) {
    const e = el("mark", "iv " + m.where + (m.answer ? " in-answer" : "") +
      (m.n ? "" : " eos"), text);
    e.title = ivText(m);
    e.tabIndex = 0;
    e.addEventListener("click", (ev) => {
      ev.stopPropagation();
      const sec = e.closest("section.arm");
      const info = sec && sec.querySelector(".ivinfo");
      if (info) info.textContent = ivText(m);
    });
    return e;
  }
  /* s[a:b] into parent: the answer/object span as one mark, the interventions (sorted,
     not overlapping) as marks inside it or beside it */
  function appendRange(parent, s, a, b, span, kind, marks) {
    const ms = (marks || []).filter((m) => m.n > 0 ? m.at < b && m.at + m.n > a
      : m.at >= a && (m.at < b || (m.at === b && b === s.length)));
    const pts = new Set([a, b]);
    for (const x of span || []) if (x > a && x < b) pts.add(x);
    for (const m of ms) for (const x of [m.at, m.at + m.n]) if (x > a && x < b) pts.add(x);
    const sorted = Array.from(pts).sort((x, y) => x - y);
    const zero = ms.filter((m) => m.n === 0), wide = ms.filter((m) => m.n > 0);
    let spanEl = null, k = 0, z = 0;
    for (let i = 0; i < sorted.length; i++) {
      const p = sorted[i], q = i + 1 < sorted.length ? sorted[i + 1] : p;
      if (!(span && span[0] <= p && p < span[1] && q > p)) spanEl = null;
      else if (!spanEl) {
        spanEl = el("mark", kind);
        spanEl.title = kind === "json" ? "the first JSON object: read for validity and the answer"
          : "the extracted answer";
        parent.appendChild(spanEl);
      }
      const box = spanEl || parent;
      for (; z < zero.length && zero[z].at <= p; z++) {
        if (zero[z].at === p) box.appendChild(ivMark(zero[z], ""));
      }
      if (q === p) continue;
      while (k < wide.length && wide[k].at + wide[k].n <= p) k++;
      const m = wide[k];
      box.appendChild(m && m.at <= p ? ivMark(m, s.slice(p, q))
        : document.createTextNode(s.slice(p, q)));
    }
  }
  function textBlock(cut, cls, span, kind, marks) {
    const pre = el("pre", "text " + (cls || ""));
    if (cut.omitted) {
      appendRange(pre, cut.s, 0, cut.at, span, kind, marks);
      pre.appendChild(el("span", "cutmark", "[… " + cut.omitted.toLocaleString("en") +
        " characters not embedded: a text keeps its first and last " +
        (data.max_text_chars / 2).toLocaleString("en") + "; the replay has all of it …]"));
      appendRange(pre, cut.s, cut.at, cut.s.length, span, kind, marks);
    } else {
      appendRange(pre, cut.s, 0, cut.s.length, span, kind, marks);
    }
    return pre;
  }
  function kv(pairs) {
    const dl = el("dl", "kv");
    for (const [k, v, cls] of pairs) {
      dl.appendChild(el("dt", null, k));
      dl.appendChild(el("dd", cls || null, v));
    }
    return dl;
  }
  function armSection(it, key) {
    const v = it.arms[key];
    const sec = el("section", "arm");
    sec.dataset.arm = key;
    const h = el("h4");
    h.appendChild(el("code", null, key));
    h.appendChild(document.createTextNode(" "));
    h.appendChild(badge(v.state));
    h.appendChild(el("span", "note", " " + v.state));
    sec.appendChild(h);
    const facts = [];
    if (v.finish_reason) facts.push(["finish_reason", v.finish_reason]);
    if (v.unsupported) facts.push(["unsupported schema", v.unsupported]);
    if (facts.length) sec.appendChild(kv(facts));
    for (const t of v.turns || []) {
      sec.appendChild(el("div", "role", t.role));
      if (t.prompt !== null && t.prompt !== undefined) {
        sec.appendChild(textBlock(it.prompts[t.prompt], "prompt"));
      } else if (t.arm) {
        sec.appendChild(el("p", "note", "(the text of " + t.arm + ", shown in its section)"));
      } else {
        sec.appendChild(el("p", "note", "not recorded"));
      }
    }
    sec.appendChild(el("div", "role", "output"));
    if (v.text) {
      const iv = v.interventions;
      const out = textBlock(v.text, "output", v.span, v.span_kind, iv ? iv.marks : null);
      out.dataset.role = "output";
      sec.appendChild(out);
      if (iv) {
        sec.appendChild(kv([["interventions", iv.iv + (iv.iv_answer === undefined ? "" :
          ", " + iv.iv_answer + " in the answer value") + (iv.marks.length < iv.iv ?
          "; " + iv.marks.length + " marked (the strongest, in the embedded text)" : "")]]));
        if (iv.iv) sec.appendChild(el("p", "ivinfo note", "Hover over or click a marked " +
          "token: the model's choice and what the grammar forced instead."));
      }
    } else {
      sec.appendChild(el("p", "note", "no text recorded"));
    }
    const ans = [["extracted answer", v.answer === null || v.answer === undefined ?
      "none" : v.answer, "mono answer"]];
    if (v.text && !v.span) ans.push(["marked", "no span: the step that read the answer does not record one"]);
    if (v.span_kind === "json") ans.push(["marked", "the first JSON object (validity and the answer are read from it)"]);
    sec.appendChild(kv(ans));
    if (v.fields) sec.appendChild(fieldList(v.fields, it.fields_changed || []));
    return sec;
  }
  /* the arm's fields: each "name: state (value)", a field two arms read differently
     marked "changed" (class and word, so it reads without colour) */
  function fieldList(fields, changed) {
    const ul = el("ul", "fields");
    for (const [name, state, value] of fields) {
      const moved = changed.includes(name);
      ul.appendChild(el("li", "field " + (state === "n/a" ? "na" : state) +
        (moved ? " changed" : ""), name + ": " + state +
        (value === null || value === undefined ? "" : " (" + value + ")") +
        (moved ? " [changed between arms]" : "")));
    }
    return ul;
  }
  function summary(it) {
    const t = el("table", "summary");
    const hr = el("tr");
    const changed = it.fields_changed || [];
    const heads = ["arm", "state", "extracted answer", "finish"];
    if (changed.length) heads.push("fields changed between arms");
    for (const h of heads) hr.appendChild(el("th", null, h));
    t.appendChild(el("thead")).appendChild(hr);
    const body = t.appendChild(el("tbody"));
    for (const a of data.arms) {
      const v = it.arms[a];
      const tr = body.appendChild(el("tr"));
      tr.dataset.arm = a;
      tr.appendChild(el("td")).appendChild(el("code", null, a));
      const st = tr.appendChild(el("td"));
      st.appendChild(badge(v.state));
      st.appendChild(el("span", "note", " " + v.state));
      tr.appendChild(el("td", "mono answer", it.detailed === false ? "not embedded" :
        v.answer === null || v.answer === undefined ? "none" : v.answer));
      tr.appendChild(el("td", null, v.finish_reason || ""));
      if (changed.length) tr.appendChild(el("td", "mono", (v.fields || []).filter(
        (f) => changed.includes(f[0])).map((f) => f[0] + ": " + f[1]).join(", ")));
    }
    return t;
  }
  function show(i) {
    const it = items[i];
    rows.forEach((r) => r.classList.remove("sel"));
    rows[i].classList.add("sel");
    const d = $("detail");
    d.replaceChildren();
    d.dataset.id = it.id;
    d.appendChild(el("h3", "mono id", it.id));
    const facts = it.detailed !== false ? [["gold", it.gold, "mono gold"]] : [];
    if (it.excluded) facts.push(["excluded", it.excluded]);
    d.appendChild(kv(facts));
    d.appendChild(summary(it));
    if (it.detailed === false) {
      d.appendChild(el("p", "note", "Texts not embedded: this page carries the texts, prompts " +
        "and gold of the first " + data.max_detailed.toLocaleString("en") + " items only (in " +
        "task order); the replay has them all."));
      return;
    }
    d.appendChild(el("p", "note", data.prompts_note));
    for (const a of data.arms) d.appendChild(armSection(it, a));
    for (const pre of d.querySelectorAll("pre.text")) {  // a long text opens at its mark
      const mark = pre.querySelector("mark:not(.iv)");
      if (mark) pre.scrollTop = Math.max(0, mark.offsetTop - pre.clientHeight / 2);
    }
  }

  apply();
})();
