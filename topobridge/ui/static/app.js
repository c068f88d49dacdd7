// topobridge ui: draws what the server's view model sends (topobridge/ui/model.py).
// No framework and no fetch beyond this server. Text from the cluster is only ever set as
// textContent, never parsed as HTML.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const ROW = 58;
const GUTTER = 124;
const RAMP = [[215, 48, 39], [252, 141, 89], [254, 224, 139], [166, 217, 106], [26, 152, 80]];
const SHORT = { "nvidia.com/gpu": "GPU", cpu: "CPU", memory: "memory" };
const EXAMPLE = `apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: what-if, namespace: default}
spec:
  minMember: 2
  networkTopology: {mode: hard, highestTierAllowed: 1}
---
apiVersion: v1
kind: Pod
metadata:
  name: what-if-0
  namespace: default
  annotations: {scheduling.k8s.io/group-name: what-if}
spec:
  schedulerName: volcano
  containers:
  - {name: c, image: busybox, resources: {requests: {cpu: "4", memory: 8Gi}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: what-if-1
  namespace: default
  annotations: {scheduling.k8s.io/group-name: what-if}
spec:
  schedulerName: volcano
  containers:
  - {name: c, image: busybox, resources: {requests: {cpu: "4", memory: 8Gi}}}
`;

const state = {
  view: null,
  zoom: "cluster",
  tree: null,
  resource: null,
  opened: new Set(),
  whatif: null,
  drawn: false,
  lists: { pending: { q: "", offset: 0, data: null }, placed: { q: "", offset: 0, data: null } },
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

async function api(path, options) {
  const resp = await fetch(path, options);
  const text = await resp.text();
  let data;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new Error(`${path}: HTTP ${resp.status}`);
  }
  if (!resp.ok && !(data && data.error && options && options.method === "POST")) {
    throw new Error(data.error || `${path}: HTTP ${resp.status}`);
  }
  data._bytes = text.length;
  return data;
}

// --- colours ---------------------------------------------------------------------------------

function colour(f) {
  if (f === null || f === undefined || Number.isNaN(f)) return "#d5d9df";
  const x = Math.max(0, Math.min(1, f)) * (RAMP.length - 1);
  const i = Math.min(Math.floor(x), RAMP.length - 2);
  const t = x - i;
  const c = RAMP[i].map((v, k) => Math.round(v + (RAMP[i + 1][k] - v) * t));
  return `rgb(${c.join(",")})`;
}

function freeFraction(item) {
  const r = state.resource;
  const alloc = item.units.alloc[r] || 0;
  if (!alloc) return null;
  return (item.units.free[r] || 0) / alloc;
}

function inkOn(f) {
  return f !== null && (f < 0.12 || f > 0.92) ? "#ffffff" : "#1c2430";
}

// --- loading ---------------------------------------------------------------------------------

async function load() {
  let view;
  try {
    view = await api("api/view");
  } catch (e) {
    $("status").textContent = String(e.message || e);
    return;
  }
  state.view = view;
  if (!state.resource || !view.resources.includes(state.resource)) state.resource = view.resources[0] || "cpu";
  state.tree = view.tree;
  if (state.zoom !== "cluster") {
    try {
      state.tree = await api(`api/tree?id=${encodeURIComponent(state.zoom)}`);
    } catch (e) {
      state.zoom = "cluster"; // the domain is gone: back to the whole cluster
    }
  }
  for (const which of ["pending", "placed"]) {
    const list = state.lists[which];
    list.data = view[which];
    if (list.q || list.offset) await fetchList(which);
  }
  render();
  $("status").textContent =
    `version ${view.version} · ${view.counts.nodes.toLocaleString("en-US")} nodes, ${view.counts.domains.toLocaleString("en-US")} domains · ` +
    `model built in ${view.buildMs} ms · page data ${(view._bytes / 1024).toFixed(1)} kB`;
  document.body.dataset.version = String(view.version);
  if (!state.drawn) {
    state.drawn = true;
    performance.mark("topobridge:first-draw");
  }
  explainOpened();
}

// Open cards are explained again after a change, at most once per EXPLAIN_EVERY ms: on a busy
// cluster changes come several times a second, and each explanation runs the scheduler's cycle.
const EXPLAIN_EVERY = 3000;
let explainedAt = 0;
let explainTimer = null;

function explainOpened() {
  if (explainTimer !== null) return;
  const wait = explainedAt + EXPLAIN_EVERY - Date.now();
  explainTimer = setTimeout(() => {
    explainTimer = null;
    explainedAt = Date.now();
    for (const gang of state.opened) fillExplanation(gang);
  }, Math.max(0, wait));
}

async function zoom(id) {
  try {
    state.tree = await api(`api/tree?id=${encodeURIComponent(id)}`);
    state.zoom = id;
  } catch (e) {
    $("selected").textContent = String(e.message || e);
    return;
  }
  drawTree();
  drawCrumbs();
}

// --- the picture -----------------------------------------------------------------------------

function layout(d, x0, x1, depth, out) {
  out.push({ kind: "domain", item: d, x0, x1, depth });
  const kids = [];
  for (const c of d.domains || []) kids.push({ kind: "domain", item: c, w: Math.max(c.nodeCount, 1) });
  if (d.nodes) for (const n of d.nodes) kids.push({ kind: "node", item: n, w: 1 });
  else if (d.directNodes) kids.push({ kind: "nodes", item: d, w: d.directNodes });
  const total = kids.reduce((s, k) => s + k.w, 0);
  let x = x0;
  for (const k of kids) {
    const w = ((x1 - x0) * k.w) / total;
    if (k.kind === "domain") layout(k.item, x, x + w, depth + 1, out);
    else out.push({ kind: k.kind, item: k.item, x0: x, x1: x + w, depth: depth + 1 });
    x += w;
  }
}

function tierName(tier) {
  const t = (state.view.tiers || []).find((x) => x.tier === tier);
  return t ? t.name : `tier ${tier}`;
}

function shortName(name) {
  const i = name.lastIndexOf("/");
  return i >= 0 ? name.slice(i + 1) : name;
}

function fit(text, width) {
  const n = Math.floor((width - 8) / 7);
  if (n <= 1) return "";
  return text.length <= n ? text : text.slice(0, Math.max(1, n - 1)) + "…";
}

function first(texts, width) {
  // The first text that fits whole, else "".
  return texts.find((t) => t && fit(t, width) === t) || "";
}

// What each panel last drew from: a panel whose data did not change is left as it is (a
// change elsewhere in the cluster does not reset its scroll, its open cards or its picture).
const drawnFrom = {};

function unchanged(panel, ...data) {
  const key = JSON.stringify(data);
  if (drawnFrom[panel] === key) return true;
  drawnFrom[panel] = key;
  return false;
}

function drawTree() {
  const box = $("tree");
  const width = Math.max(480, $("picture").clientWidth || 900);
  if (unchanged("tree", state.tree, state.resource, width, state.whatif, state.view.tiers)) return;
  box.replaceChildren();
  const cells = [];
  layout(state.tree, GUTTER, width - 2, 0, cells);
  const rows = Math.max(...cells.map((c) => c.depth)) + 1;
  box.setAttribute("viewBox", `0 0 ${width} ${rows * ROW + 4}`);
  box.setAttribute("height", String(rows * ROW + 4));
  const rowNames = [];
  for (const c of cells) {
    if (rowNames[c.depth] !== undefined) continue;
    rowNames[c.depth] = c.kind === "domain" ? tierName(c.item.tier) : "node";
  }
  rowNames.forEach((name, depth) => box.append(svg("text", { class: "row", x: 4, y: depth * ROW + 22 }, fit(name, GUTTER))));
  const landing = state.whatif ? new Set(state.whatif) : new Set();
  for (const c of cells) {
    const w = c.x1 - c.x0;
    if (w < 0.6) continue;
    box.append(drawCell(c, w, landing));
  }
}

function drawCell(c, w, landing) {
  const y = c.depth * ROW + 2;
  const h = ROW - 4;
  const g = svg("g", { class: `cell ${c.kind}` });
  if (c.kind === "nodes") {
    g.append(svg("rect", { class: "box", x: c.x0, y, width: w, height: h, fill: "#e4e7ec" }));
    g.append(svg("title", {}, `${c.item.directNodes} nodes directly in ${c.item.name}: zoom into a domain of at most ${state.view.nodeLimit} nodes to draw them`));
    const t = fit(`${c.item.directNodes} nodes`, w);
    if (t) g.append(svg("text", { x: c.x0 + 5, y: y + 18 }, t));
    return g;
  }
  const item = c.item;
  const f = freeFraction(item);
  const r = state.resource;
  g.dataset.id = item.id || item.name;
  g.dataset.kind = c.kind;
  g.append(svg("rect", { class: "box", x: c.x0, y, width: w, height: h, fill: colour(f) }));
  const ink = inkOn(f);
  const full = c.kind === "domain" && item.id !== "cluster" ? shortName(item.name) : item.name;
  const name = first([full, full.slice(full.lastIndexOf("-") + 1)], w) || fit(full, w);
  if (name) g.append(svg("text", { class: "name", x: c.x0 + 5, y: y + 16, fill: ink }, name));
  const figures = item.free[r] !== undefined ? [`${item.free[r]}/${item.alloc[r]} ${SHORT[r] || r} free`, `${item.free[r]}/${item.alloc[r]}`] : [];
  if (f !== null) figures.push(`${Math.round(f * 100)}%`);
  const second = first(figures, w);
  if (second) g.append(svg("text", { x: c.x0 + 5, y: y + 31, fill: ink }, second));
  const tip = [item.name, item.text];
  if (c.kind === "domain") tip.push(`${item.nodeCount.toLocaleString("en-US")} node(s)`);
  if (c.kind === "node" && item.podCount) tip.push(`${item.podCount} pod(s): ${item.pods.map((p) => p.name).join(", ")}`);
  if (item.gangs && item.gangs.length) tip.push(`gangs: ${item.gangs.join(", ")}`);
  g.append(svg("title", {}, tip.join("\n")));
  if (item.gangs && item.gangs.length) {
    const frame = { x: c.x0 + 2.5, y: y + 1.5, width: Math.max(0, w - 5), height: h - 3 };
    g.append(svg("rect", { class: "gang-halo", ...frame }), svg("rect", { class: "gang", ...frame }));
    const label = item.gangs.length === 1 ? `▣ ${shortName(item.gangs[0])}` : `▣ ${item.gangs.length} gangs`;
    const t = fit(label, w - 4);
    if (t) g.append(svg("text", { class: "badge", x: c.x0 + 7, y: y + h - 7, fill: ink }, t));
  }
  if (landing.has(c.kind === "domain" ? item.id : item.name)) {
    g.append(svg("rect", { class: "whatif", x: c.x0 + 6, y: y + 5, width: Math.max(0, w - 12), height: h - 10 }));
  }
  if (c.kind === "node") {
    if (item.podCount && w > 60) g.append(svg("text", { x: c.x0 + 5, y: y + 45, fill: ink }, fit(`${item.podCount} pod(s)`, w)));
    g.addEventListener("click", () => showNode(item));
  } else {
    g.addEventListener("click", () => (item.id === state.zoom ? showDomain(item) : zoom(item.id)));
  }
  return g;
}

function showDomain(d) {
  const parts = [`${d.name}: ${d.text}, ${d.nodeCount.toLocaleString("en-US")} node(s)`];
  if (d.gangs.length) parts.push(`gangs placed here: ${d.gangs.join(", ")}`);
  $("selected").textContent = parts.join(" · ");
}

function showNode(n) {
  const pods = n.pods.map((p) => `${p.name} (${p.state})`).join(", ");
  const more = n.podCount > n.pods.length ? ` and ${n.podCount - n.pods.length} more` : "";
  $("selected").textContent = `${n.name}: ${n.text}` + (n.podCount ? ` · pods: ${pods}${more}` : " · no pods");
}

function drawCrumbs() {
  const nav = $("crumbs");
  nav.replaceChildren();
  const path = state.tree.path || [{ id: "cluster", name: "cluster" }];
  path.forEach((p, i) => {
    if (i) nav.append(el("span", { class: "sep" }, "›"));
    if (i === path.length - 1) nav.append(el("span", { class: "here" }, p.name));
    else nav.append(el("a", { onclick: () => zoom(p.id), "data-id": p.id }, p.name));
  });
  showDomain(state.tree);
}

function drawLegend() {
  const r = state.resource;
  const stops = RAMP.map((c, i) => `rgb(${c.join(",")}) ${(i * 100) / (RAMP.length - 1)}%`).join(", ");
  const ramp = el("span", { class: "ramp", style: `background: linear-gradient(to right, ${stops})` });
  $("legend").replaceChildren(
    el("span", {}, `free ${SHORT[r] || r}: 0% `, ramp, " 100%"),
    el("span", {}, el("span", { class: "swatch", style: "background:#d5d9df" }), `no ${SHORT[r] || r}`),
    el("span", {}, el("span", { class: "swatch", style: "border:3px solid var(--gang)" }), "a placed gang (its lowest domain)"),
    el("span", {}, el("span", { class: "swatch", style: "border:3px dashed var(--whatif)" }), "where the what-if lands"),
    el("span", {}, el("span", { class: "swatch", style: "background:#e4e7ec" }), "nodes not drawn at this zoom"),
  );
}

// --- the panels ------------------------------------------------------------------------------

function drawLargest() {
  const v = state.view;
  const head = el("tr", {}, el("th", {}, "tier"));
  for (const r of v.resources) head.append(el("th", { class: r === state.resource ? "chosen" : "" }, `most free ${SHORT[r] || r}`));
  const rows = [head];
  for (const t of [...v.largest].reverse()) {
    const tr = el("tr", {}, el("td", {}, `${t.tier} ${t.name}`));
    for (const r of v.resources) {
      const b = t.best[r];
      tr.append(el("td", { class: r === state.resource ? "chosen" : "" }, b ? `${b.freeText} in ${b.domain}` : "–"));
    }
    rows.push(tr);
  }
  $("largest").replaceChildren(...rows);
}

async function fetchList(which) {
  const list = state.lists[which];
  const q = encodeURIComponent(list.q);
  try {
    list.data = await api(`api/gangs?list=${which}&q=${q}&offset=${list.offset}&limit=${PAGE}`);
  } catch (e) {
    $("status").textContent = String(e.message || e);
  }
}

function drawPager(which) {
  const d = state.lists[which].data;
  const box = $(`${which}-pager`);
  if (d.matched <= d.items.length && !state.lists[which].q) {
    box.replaceChildren();
    return;
  }
  const step = async (offset) => {
    state.lists[which].offset = Math.max(0, offset);
    await fetchList(which);
    which === "pending" ? drawPending() : drawPlaced();
  };
  const size = Math.max(d.items.length, 1);
  const shown = d.items.length ? `${(d.offset + 1).toLocaleString("en-US")}–${(d.offset + d.items.length).toLocaleString("en-US")}` : "none";
  const of = d.query ? `${d.matched.toLocaleString("en-US")} matching of ${d.total.toLocaleString("en-US")}` : d.total.toLocaleString("en-US");
  box.replaceChildren(
    el("button", { type: "button", class: "secondary", "data-page": "previous", ...(d.offset ? {} : { disabled: "" }), onclick: () => step(d.offset - size) }, "‹"),
    el("span", {}, `${shown} of ${of}`),
    el("button", { type: "button", class: "secondary", "data-page": "next", ...(d.offset + d.items.length < d.matched ? {} : { disabled: "" }), onclick: () => step(d.offset + size) }, "›"),
  );
}

function drawPending() {
  const v = state.view;
  const d = state.lists.pending.data;
  $("pending-count").textContent = v.counts.pending.toLocaleString("en-US");
  const box = $("pending");
  drawPager("pending");
  if (unchanged("pending", d.items, d.query)) return;
  if (!d.items.length) {
    box.replaceChildren(el("p", { class: "muted" }, d.query ? "No pending gang matches." : "None: every gang is placed."));
    return;
  }
  const first = state.drawn ? null : new Set(d.items.slice(0, 3).map((g) => g.gang));
  if (first) for (const g of first) state.opened.add(g);
  box.replaceChildren(
    ...d.items.map((g) => {
      const body = el("div", { class: "explain" }, el("span", { class: "muted" }, "asking the scheduling cycle…"));
      // The reason is shown once: on the closed card's one line, or, opened, in the explanation.
      const d = el(
        "details",
        { class: "gang", "data-gang": g.gang },
        el("summary", {}, el("b", {}, g.gang), ` ${g.pending.toLocaleString("en-US")} pending, ${g.bound.toLocaleString("en-US")}/${g.minMember.toLocaleString("en-US")} bound`, el("span", { class: "reason", title: g.reason }, g.reason)),
        body,
      );
      if (state.opened.has(g.gang)) d.open = true;
      d.addEventListener("toggle", () => {
        if (d.open) {
          state.opened.add(g.gang);
          fillExplanation(g.gang);
        } else state.opened.delete(g.gang);
      });
      return d;
    }),
  );
}

async function fillExplanation(gang) {
  const d = [...document.querySelectorAll("details.gang")].find((x) => x.dataset.gang === gang);
  if (!d) return;
  const body = d.querySelector(".explain");
  try {
    const e = await api(`api/explain?gang=${encodeURIComponent(gang)}`);
    body.replaceChildren(...renderExplanation(e.explanation));
  } catch (err) {
    body.replaceChildren(el("span", { class: "error" }, String(err.message || err)));
  }
}

const LONG = 320;
const PAGE = 20; // gangs in one page of a list (model.GANGS_SHOWN)

function message(text) {
  // The scheduler's message names every domain it tried: at scale, the start and a way to the rest.
  if (text.length <= LONG) return el("div", { class: "message" }, text);
  return el("details", { class: "message" }, el("summary", {}, `${text.slice(0, LONG)}… (${text.length} characters)`), text);
}

function renderExplanation(e) {
  const out = [];
  const v = e.verdict;
  out.push(el("div", { class: "verdict" }, `${v.code} at ${v.step}${v.plugin ? ` (${v.plugin})` : ""}`));
  if (v.message) out.push(message(v.message));
  if (e.tiers.length) {
    const rows = [el("tr", {}, el("th", {}, "tier"), el("th", {}, "best domain now"), el("th", {}, "holds"))];
    for (const t of e.tiers) {
      rows.push(el("tr", {}, el("td", {}, `${t.tier} ${t.name}`), el("td", {}, t.domain), el("td", {}, `${t.holds}/${e.pending}${t.allowed ? "" : " (above the tier limit)"}`)));
    }
    out.push(el("table", {}, ...rows));
  }
  const list = (title, items) => {
    if (items.length) out.push(el("div", {}, title), el("ul", {}, ...items.map((x) => el("li", {}, x))));
  };
  list("nodes the filters exclude:", Object.entries(e.excluded).sort((a, b) => b[1] - a[1]).map(([why, n]) => `${n} ${why}`));
  if (e.insufficient.length) out.push(el("div", {}, `short of room: ${e.insufficient.join(", ")}`));
  if (e.tierLimit) out.push(el("div", {}, e.tierLimit));
  const p = e.preemption;
  if (p) {
    if (p.possible) list(`preemption would evict ${p.victims.length} pod(s) in ${p.domain}:`, p.victims.map((x) => `${x.pod} on ${x.node} (priority ${x.priority})`));
    else out.push(el("div", {}, `preemption cannot help: ${p.why}`));
  }
  list("single changes that would let it start:", e.suggestions);
  return out;
}

function drawPlaced() {
  const v = state.view;
  const d = state.lists.placed.data;
  $("placed-count").textContent = v.counts.placed.toLocaleString("en-US");
  drawPager("placed");
  if (unchanged("placed", d.items, d.query)) return;
  if (!d.items.length) {
    $("placed").replaceChildren(el("p", { class: "muted" }, d.query ? "No placed gang matches." : "None yet."));
    return;
  }
  $("placed").replaceChildren(
    ...d.items.map((g) =>
      el("div", { class: "placed-gang", "data-gang": g.gang }, el("a", { onclick: () => zoom(g.domain) }, g.gang), ` in ${g.domain} (tier ${g.tier}), ${g.bound.toLocaleString("en-US")}/${g.minMember.toLocaleString("en-US")} bound`),
    ),
  );
}

function drawWarnings() {
  const v = state.view;
  const box = $("warnings");
  box.hidden = !v.warningCount;
  box.querySelector("summary").textContent = `${v.warningCount} warning(s) reading the snapshot`;
  box.querySelector("ul").replaceChildren(...v.warnings.map((w) => el("li", {}, w)));
}

function drawHeader() {
  const v = state.view;
  $("source").textContent = v.source;
  $("topology").textContent = v.topology;
  const live = $("live");
  live.textContent = v.live ? "● live" : "file";
  live.className = `badge ${v.live ? "live" : "file"}`;
  const sel = $("resource");
  sel.replaceChildren(...v.resources.map((r) => el("option", { value: r }, SHORT[r] || r)));
  sel.value = state.resource;
}

function render() {
  drawHeader();
  drawCrumbs();
  drawTree();
  drawLegend();
  drawLargest();
  drawPending();
  drawPlaced();
  drawWarnings();
}

// --- what if ---------------------------------------------------------------------------------

async function runWhatIf() {
  const button = $("whatif-run");
  const box = $("whatif-result");
  button.disabled = true;
  box.replaceChildren();
  const progress = $("whatif-progress");
  progress.hidden = false;
  progress.textContent = "sending the job…";
  let asking = false;
  const ticker = setInterval(async () => {
    if (asking) return;
    asking = true;
    try {
      const p = await api("api/whatif/progress");
      if (p.running && !progress.hidden) progress.textContent = `${p.step}… ${p.seconds.toFixed(1)} s`;
    } catch (e) {
      // the answer itself says what went wrong
    } finally {
      asking = false;
    }
  }, 400);
  try {
    const data = await api("api/whatif", { method: "POST", body: $("whatif-text").value, headers: { "Content-Type": "text/plain" } });
    box.replaceChildren(...renderWhatIf(data));
    state.whatif = data.error ? null : data.gangs.filter((g) => g.placed).map((g) => g.domain);
    drawTree();
  } catch (e) {
    box.replaceChildren(el("div", { class: "error" }, String(e.message || e)));
  } finally {
    clearInterval(ticker);
    progress.hidden = true;
    button.disabled = false;
  }
}

function renderWhatIf(data) {
  if (data.error) return [el("div", { class: "error", id: "whatif-error" }, data.error)];
  const out = [];
  for (const g of data.gangs) {
    const box = el("div", { class: `answer ${g.placed ? "" : "waits"}`, "data-gang": g.gang, "data-placed": String(g.placed) });
    if (g.placed) {
      box.append(el("div", {}, el("b", {}, `${g.gang}: lands in `), el("a", { onclick: () => zoom(g.domain) }, g.domain), ` (tier ${g.tier})`));
      const rows = Object.entries(g.binds).map(([pod, node]) => el("tr", { "data-pod": pod }, el("td", {}, pod), el("td", {}, node)));
      box.append(el("table", { class: "binds" }, el("tr", {}, el("th", {}, "pod"), el("th", {}, "node")), ...rows));
    } else {
      box.append(el("div", {}, el("b", {}, `${g.gang}: would wait`)));
      // The run's message, unless the explanation below says the same.
      if (g.message && !(g.explanation && g.explanation.verdict.message === g.message)) box.append(message(g.message));
      if (g.explanation) box.append(el("div", { class: "explain" }, ...renderExplanation(g.explanation)));
    }
    out.push(box);
  }
  if (data.evicted.length) out.push(el("div", { class: "error" }, `it would evict: ${data.evicted.join(", ")}`));
  if (data.evictedForOthers.length) {
    out.push(el("div", { class: "muted" }, `meanwhile the cycle places gangs already waiting, evicting ${data.evictedForOthers.join(", ")}`));
  }
  for (const w of data.warnings || []) out.push(el("div", { class: "muted" }, w));
  return out;
}

// --- live updates ----------------------------------------------------------------------------

function follow() {
  const source = new EventSource("api/events");
  source.addEventListener("changed", () => load());
  source.addEventListener("hello", (ev) => {
    const v = JSON.parse(ev.data).version;
    if (!state.view || v !== state.view.version) load();
  });
  source.onerror = () => {
    const live = $("live");
    if (state.view && state.view.live) {
      live.textContent = "reconnecting";
      live.className = "badge down";
    }
  };
  source.onopen = () => {
    if (state.view) drawHeader();
  };
}

$("resource").addEventListener("change", (ev) => {
  state.resource = ev.target.value;
  drawTree();
  drawLegend();
  drawLargest();
});
$("whatif-run").addEventListener("click", runWhatIf);
$("whatif-example").addEventListener("click", () => ($("whatif-text").value = EXAMPLE));
for (const which of ["pending", "placed"]) {
  let timer = null;
  $(`${which}-search`).addEventListener("input", (ev) => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      state.lists[which].q = ev.target.value;
      state.lists[which].offset = 0;
      await fetchList(which);
      which === "pending" ? drawPending() : drawPlaced();
    }, 250);
  });
}
window.addEventListener("resize", () => state.view && drawTree());
follow();
