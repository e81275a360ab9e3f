/* report.html's k samples, only on the page of a run of k > 1 samples per item: under
   each arm's output in the item view, that arm's samples 2..k (state, extracted answer,
   finish reason, text with the answer marked). Vanilla JS, no network; every string
   from the data is put on the page with textContent, never as markup. report.js draws
   the item view; this script adds to each arm section it draws. */
"use strict";
(function () {
  const node = document.getElementById("vbw-data");
  const data = node ? JSON.parse(node.textContent) : null;
  const detail = document.getElementById("detail");
  if (!data || !data.items || !detail) return;
  const byId = new Map(data.items.map((it) => [it.id, it]));

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  const STATE_LABEL = { "valid/right": "V✓", "valid/wrong": "V✗", "invalid/right": "I✓",
    "invalid/wrong": "I✗", "n/a/right": "✓", "n/a/wrong": "✗", "excluded": "—" };
  function badge(st) {
    const cls = st === "excluded" ? "excluded" : st.replace("n/a", "na").replace("/", "-");
    const b = el("span", "st " + cls, STATE_LABEL[st] || st);
    b.title = st;
    return b;
  }
  /* the text as embedded (its head and tail when long), the answer's span marked */
  function textBlock(cut, span) {
    const pre = el("pre", "text output");
    const s = cut.s;
    const cuts = [0, s.length];
    if (span) cuts.push(span[0], span[1]);
    if (cut.omitted) cuts.push(cut.at);
    const at = [...new Set(cuts)].sort((a, b) => a - b);
    for (let i = 0; i + 1 < at.length; i++) {
      if (cut.omitted && at[i] === cut.at) {
        pre.appendChild(el("span", "omitted", " [… " + cut.omitted.toLocaleString("en") +
          " characters omitted …] "));
      }
      const part = s.slice(at[i], at[i + 1]);
      const inSpan = span && at[i] >= span[0] && at[i + 1] <= span[1];
      pre.appendChild(inSpan ? el("mark", null, part) : document.createTextNode(part));
    }
    return pre;
  }
  function sampleList(samples) {
    const box = el("div", "samples");
    box.appendChild(el("div", "role", "samples 2 to " + (samples.length + 1) +
      " (the output above is sample 1)"));
    samples.forEach((s, i) => {
      const d = el("details", "sample");
      d.dataset.sample = String(i + 2);
      const sum = el("summary");
      sum.appendChild(el("span", null, "sample " + (i + 2) + " "));
      sum.appendChild(badge(s.state));
      sum.appendChild(el("span", "note", " " + s.state + "; answer: " +
        (s.answer === null || s.answer === undefined ? "none" : s.answer) +
        (s.finish_reason ? "; finish_reason " + s.finish_reason : "")));
      d.appendChild(sum);
      d.appendChild(s.text ? textBlock(s.text, s.span) : el("p", "note", "no text recorded"));
      box.appendChild(d);
    });
    return box;
  }
  function addSamples() {
    const it = byId.get(detail.dataset.id);
    if (!it || it.detailed === false) return;
    for (const sec of detail.querySelectorAll("section.arm")) {
      const v = it.arms[sec.dataset.arm];
      if (v && v.samples && !sec.querySelector("div.samples")) {
        sec.appendChild(sampleList(v.samples));
      }
    }
  }
  new MutationObserver(addSamples).observe(detail, { childList: true });
})();
