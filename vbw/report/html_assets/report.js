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
  select.addEventListener("change", apply);
  $("search").addEventListener("input", apply);

  /* -- the detail pane ---------------------------------------------------------------- */
  function appendRange(parent, s, a, b, span, kind) {
    if (span && span[0] < b && span[1] > a) {
      const m0 = Math.max(a, span[0]), m1 = Math.min(b, span[1]);
      parent.appendChild(document.createTextNode(s.slice(a, m0)));
      const mark = el("mark", kind, s.slice(m0, m1));
      mark.title = kind === "json" ? "the first JSON object: read for validity and the answer"
        : "the extracted answer";
      parent.appendChild(mark);
      parent.appendChild(document.createTextNode(s.slice(m1, b)));
    } else {
      parent.appendChild(document.createTextNode(s.slice(a, b)));
    }
  }
  function textBlock(cut, cls, span, kind) {
    const pre = el("pre", "text " + (cls || ""));
    if (cut.omitted) {
      appendRange(pre, cut.s, 0, cut.at, span, kind);
      pre.appendChild(el("span", "cutmark", "[… " + cut.omitted.toLocaleString("en") +
        " characters not embedded: a text keeps its first and last " +
        (data.max_text_chars / 2).toLocaleString("en") + "; the replay has all of it …]"));
      appendRange(pre, cut.s, cut.at, cut.s.length, span, kind);
    } else {
      appendRange(pre, cut.s, 0, cut.s.length, span, kind);
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
      const out = textBlock(v.text, "output", v.span, v.span_kind);
      out.dataset.role = "output";
      sec.appendChild(out);
    } else {
      sec.appendChild(el("p", "note", "no text recorded"));
    }
    const ans = [["extracted answer", v.answer === null || v.answer === undefined ?
      "none" : v.answer, "mono answer"]];
    if (v.text && !v.span) ans.push(["marked", "no span: the step that read the answer does not record one"]);
    if (v.span_kind === "json") ans.push(["marked", "the first JSON object (validity and the answer are read from it)"]);
    sec.appendChild(kv(ans));
    return sec;
  }
  function summary(it) {
    const t = el("table", "summary");
    const hr = el("tr");
    for (const h of ["arm", "state", "extracted answer", "finish"]) hr.appendChild(el("th", null, h));
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
      const mark = pre.querySelector("mark");
      if (mark) pre.scrollTop = Math.max(0, mark.offsetTop - pre.clientHeight / 2);
    }
  }

  apply();
})();
