// rung view: draws the graph data of the page (see rung.runtime.view) with dagre's layout.
// Every text from the model goes into the page through textContent, never as HTML.
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("rung-data").textContent);
  const SVG = "http://www.w3.org/2000/svg";
  const FONT = "12px ui-sans-serif, system-ui, sans-serif";
  const BOLD = "bold " + FONT;
  const MAX_CHARS = 44;
  const LINE = 15;
  const PAD = 8;

  // ---- index of nodes, graphs and marks --------------------------------------------------

  const nodeById = new Map(); // id -> {node, graph: index}
  data.graphs.forEach((g, gi) => g.nodes.forEach((n) => nodeById.set(n.id, { node: n, graph: gi })));
  const marks = data.marks || {};
  const markedIds = new Map(); // node id -> note
  const markFirst = new Map(); // mark name -> first node id
  for (const [id, entry] of nodeById) {
    const name = entry.node.name;
    if (entry.node.kind === "op" && name && Object.prototype.hasOwnProperty.call(marks, name)) {
      markedIds.set(id, marks[name]);
      if (!markFirst.has(name)) markFirst.set(name, id);
    }
  }

  // ---- page skeleton ---------------------------------------------------------------------

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svgEl(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }

  const bar = el("header", "bar");
  const titleEl = el("span", "title", data.title);
  const levelEl = el("span", "level", data.level ? data.level : "");
  const crumbs = el("nav", "crumbs");
  const search = el("input", "search");
  search.type = "search";
  search.placeholder = "search nodes by name or op";
  search.setAttribute("aria-label", "search nodes");
  const matchesEl = el("span", "matches", "");
  const fitButton = el("button", "fit", "fit");
  fitButton.title = "fit the graph to the window";
  bar.append(titleEl, levelEl, crumbs, search, matchesEl, fitButton);

  const banner = el("div", "banner");
  const stage = el("main", "stage");
  const svg = svgEl("svg", { class: "canvas" });
  const defs = svgEl("defs", {});
  const marker = svgEl("marker", {
    id: "arrow", viewBox: "0 0 10 10", refX: "9", refY: "5",
    markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse",
  });
  marker.append(svgEl("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }));
  defs.append(marker);
  const viewport = svgEl("g", { class: "viewport" });
  svg.append(defs, viewport);
  stage.append(svg);
  const panel = el("aside", "panel");
  document.body.append(bar, banner, stage, panel);

  // ---- text measuring and node sizes -----------------------------------------------------

  const ctx = document.createElement("canvas").getContext("2d");
  function textWidth(text, font) {
    ctx.font = font;
    return ctx.measureText(text).width;
  }
  function clip(text) {
    text = text || "";
    return text.length > MAX_CHARS ? text.slice(0, MAX_CHARS - 1) + "\u2026" : text;
  }
  function nodeLines(n) {
    const lines = [clip(n.label)];
    if (n.kind === "op" && n.name) lines.push(clip(n.name));
    if (n.type) lines.push(clip(n.type));
    return lines;
  }
  function nodeSize(n) {
    const lines = nodeLines(n);
    let w = 0;
    lines.forEach((t, i) => { w = Math.max(w, textWidth(t, i === 0 ? BOLD : FONT)); });
    const extra = n.regions ? 22 : 0;
    return { width: Math.ceil(w) + 2 * PAD + extra, height: lines.length * LINE + 2 * PAD - 2, lines };
  }

  // ---- layout (once per graph, cached; in a worker when the browser has them) -------------

  // placeGraph runs where dagre is: in a Web Worker built from this page's own script text
  // (the page is opened from file://, so a worker cannot load a file), or, failing that, on
  // the main thread. It must therefore use nothing from this closure but its argument.
  //
  // Edges from one source to three or more targets share one route (a "bus", as Graphviz's
  // concentrate=true draws them): dagre then lays out one chain of invisible points per
  // source instead of one long edge per target. In DenseNet, where every feature map feeds
  // all later concatenations of its block, this cuts dagre's work by about four times.
  function placeGraph(spec) {
    const t0 = performance.now();
    const BUS_MIN = 3;
    const ids = spec.nodes.map((n) => n.id);
    const index = new Map(ids.map((id, i) => [id, i]));
    const succ = ids.map(() => []);
    const pred = ids.map(() => []);
    for (const [s, t] of spec.edges) {
      succ[index.get(s)].push(index.get(t));
      pred[index.get(t)].push(index.get(s));
    }
    // Topological order (Kahn), keeping program order where the edges allow; nodes on a
    // cycle (none in SSA graphs) keep depth 0.
    const waiting = pred.map((p) => p.length);
    const topo = [];
    for (let i = 0; i < ids.length; i++) if (!waiting[i]) topo.push(i);
    for (let k = 0; k < topo.length; k++) {
      for (const j of succ[topo[k]]) if (--waiting[j] === 0) topo.push(j);
    }
    // The longest path from the graph's sources, to group a bus's targets by row.
    const depth = ids.map(() => 0);
    for (const i of topo) for (const j of succ[i]) depth[j] = Math.max(depth[j], depth[i] + 1);
    // Trees hanging off the graph (an alloc that one op writes, a view that one op reads, and
    // what hangs off those) can sit each one row from its neighbour whatever the rest does,
    // and network simplex, dagre's ranker, spends its time on the rest. So, when there are
    // many, dagre first ranks the graph without them; then it lays out the whole with those
    // ranks, each tree node two ranks (one row: dagre puts a label rank between rows) off
    // the neighbour it hung from. The ranks are as good as network simplex's own.
    const degree = ids.map((_, i) => pred[i].length + succ[i].length);
    const peeled = ids.map(() => false);
    const anchor = ids.map(() => -1); // the node a peeled node hangs from
    const order = []; // peeled nodes, outermost first
    const queue = [];
    for (let i = 0; i < ids.length; i++) if (degree[i] === 1) queue.push(i);
    while (queue.length) {
      const i = queue.pop();
      if (peeled[i] || degree[i] !== 1) continue;
      const j = pred[i].concat(succ[i]).find((k) => !peeled[k]);
      peeled[i] = true;
      anchor[i] = j;
      order.push(i);
      if (--degree[j] === 1) queue.push(j);
    }
    // Two passes repeat dagre's ordering and positioning, which costs more than it saves below
    // about a thousand nodes (DenseNet-121's ONNX graph, 619 nodes, 41% in trees: 2.2 s in one
    // pass, 3.9 s in two; its kernel graph, 1,523 nodes, 45%: 12.8 s in one, 8.2 s in two).
    const twoPass =
      topo.length === ids.length && ids.length > 1000 && order.length > ids.length / 4;
    const inCore = (i) => !twoPass || !peeled[i];

    // The layout graph; `ranks` (id -> rank) for the second pass, null for the first.
    function build(ranks) {
      const G = new dagre.graphlib.Graph();
      G.setGraph(Object.assign({}, spec.options, ranks ? { ranker: "none" } : {}));
      G.setDefaultEdgeLabel(() => ({}));
      const final = ranks !== null || !twoPass;
      const setNode = (id, label) => {
        if (ranks) label.rank = ranks.get(id);
        G.setNode(id, label);
      };
      const edge = (v, w, route) => {
        G.setEdge(v, w);
        if (final) routes[route[0][0] + " " + w] = route;
      };
      spec.nodes.forEach((n, i) => {
        if (ranks || inCore(i)) setNode(n.id, { width: n.width, height: n.height });
      });
      succ.forEach((all, i) => {
        const source = ids[i];
        const targets = all.filter((j) => inCore(i) && inCore(j));
        if (ranks) {
          for (const j of all) {
            if (!inCore(i) || !inCore(j)) edge(source, ids[j], [[source, ids[j]]]);
          }
        }
        if (targets.length < BUS_MIN) {
          for (const j of targets) edge(source, ids[j], [[source, ids[j]]]);
          return;
        }
        // One bus point per depth among the targets: targets at the same depth hang off the
        // same point, so the bus adds no rank that the graph does not already have.
        const ts = targets.slice().sort((a, b) => depth[a] - depth[b] || a - b);
        const path = [];
        let last = source;
        let lastDepth = -1;
        ts.forEach((j, k) => {
          const target = ids[j];
          if (k === 0) {
            edge(source, target, [[source, target]]);
            return;
          }
          if (depth[j] !== lastDepth) {
            const point = `bus:${source}:${k}`;
            setNode(point, { width: 2, height: 2 });
            G.setEdge(last, point);
            path.push([last, point]);
            last = point;
            lastDepth = depth[j];
          }
          edge(last, target, path.concat([[last, target]]));
        });
      });
      return G;
    }

    const routes = {}; // "source target" -> the layout edges its drawing follows
    let G = build(null);
    dagre.layout(G);
    if (twoPass) {
      const ranks = new Map(G.nodes().map((v) => [v, G.node(v).rank]));
      for (let k = order.length - 1; k >= 0; k--) {
        const i = order[k];
        const j = anchor[i];
        ranks.set(ids[i], ranks.get(ids[j]) + (succ[j].includes(i) ? 2 : -2));
      }
      G = build(ranks);
      dagre.layout(G);
    }
    const positions = {};
    for (const id of ids) {
      const n = G.node(id);
      positions[id] = [n.x, n.y];
    }
    const points = {};
    for (const key in routes) {
      const pts = [];
      for (const [v, w] of routes[key]) pts.push(...(G.edge(v, w).points || []));
      points[key] = pts;
    }
    const finite = (v) => (Number.isFinite(v) ? v : 0);
    return {
      positions, points, width: finite(G.graph().width), height: finite(G.graph().height),
      ms: performance.now() - t0,
    };
  }

  const LAYOUT_OPTIONS = {
    rankdir: "TB", nodesep: 22, ranksep: 34, edgesep: 8, marginx: 16, marginy: 16,
  };
  let worker = null; // the layout worker, once made; false if the browser cannot make one
  const pending = new Map(); // request number -> {resolve, run}
  let requests = 0;

  function mainThread(reason) {
    if (worker === false) return;
    console.info(`rung view: laying out on the main thread (${reason}); the page may pause.`);
    if (worker) worker.terminate();
    worker = false;
    for (const [, p] of pending) p.resolve(p.run());
    pending.clear();
  }

  function makeWorker() {
    if (typeof Worker === "undefined" || typeof Blob === "undefined" || !window.URL
        || typeof URL.createObjectURL !== "function") {
      mainThread("this browser has no Web Workers");
      return;
    }
    const dagreCode = document.getElementById("rung-dagre").textContent;
    const code = `${dagreCode}\n;const placeGraph = ${placeGraph.toString()};\n`
      + "onmessage = (ev) => postMessage({ id: ev.data.id, result: placeGraph(ev.data.spec) });\n";
    let url = null;
    try {
      url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
      worker = new Worker(url);
    } catch (err) {
      mainThread("no worker: " + err);
      return;
    }
    worker.onmessage = (ev) => {
      if (url) URL.revokeObjectURL(url); // the worker has loaded it
      url = null;
      const p = pending.get(ev.data.id);
      pending.delete(ev.data.id);
      if (p) p.resolve(ev.data.result);
    };
    worker.onerror = (ev) => {
      ev.preventDefault();
      mainThread("the layout worker failed: " + (ev.message || "unknown error"));
    };
  }

  function place(spec) {
    const run = () => placeGraph(spec);
    if (worker === null) makeWorker();
    if (worker === false) {
      // Still after a paint, so that the "laying out" note shows while dagre works.
      return new Promise((resolve) => {
        requestAnimationFrame(() => setTimeout(() => resolve(run()), 0));
      });
    }
    const id = ++requests;
    return new Promise((resolve) => {
      pending.set(id, { resolve, run });
      worker.postMessage({ id, spec });
    });
  }

  const layouts = new Map(); // graph index -> Promise of its layout
  const done = new Map(); // graph index -> its layout, once finished
  const layoutTimes = {};
  const layoutWall = {};
  function layout(gi) {
    if (layouts.has(gi)) return layouts.get(gi);
    const g = data.graphs[gi];
    const sizes = new Map();
    const nodes = g.nodes.map((n) => {
      const s = nodeSize(n);
      sizes.set(n.id, s);
      return { id: n.id, width: s.width, height: s.height };
    });
    const spec = { nodes, edges: g.edges.map((e) => [e[0], e[1]]), options: LAYOUT_OPTIONS };
    const t0 = performance.now();
    const promise = place(spec).then((r) => {
      layoutTimes[gi] = Math.round(r.ms);
      layoutWall[gi] = Math.round(performance.now() - t0);
      const result = {
        sizes, ms: r.ms, width: r.width, height: r.height,
        node: (id) => ({ x: r.positions[id][0], y: r.positions[id][1] }),
        points: (source, target) => r.points[source + " " + target] || [],
      };
      done.set(gi, result);
      return result;
    });
    layouts.set(gi, promise);
    return promise;
  }

  // ---- views: the main graph, or the regions of one op -----------------------------------

  let view = null; // {owner: node id or null, graphs: [graph index]}
  const placed = new Map(); // node id -> {x, y, el} in viewport coordinates
  let selected = null;

  function viewOf(owner) {
    if (owner === null) return { owner: null, graphs: [0] };
    const n = nodeById.get(owner).node;
    return { owner, graphs: (n.regions || []).map((r) => r.graph) };
  }

  // The note shown while graphs are laid out; the page stays usable meanwhile.
  const status = el("p", "status", "");
  function opCount(graphs) {
    let count = 0;
    for (const gi of graphs) count += data.graphs[gi].nodes.filter((n) => n.kind === "op").length;
    return count;
  }

  // Draws a view once its graphs are laid out. Resolves to false if another render was asked
  // for meanwhile (then that one draws), so that a slow layout never overdraws a newer view.
  let renderToken = 0;
  async function render(v) {
    const token = ++renderToken;
    if (!v.graphs.every((gi) => done.has(gi))) {
      status.textContent = `laying out ${opCount(v.graphs)} nodes\u2026`;
      stage.append(status);
      await Promise.all(v.graphs.map(layout));
      if (token !== renderToken) return false;
    }
    status.remove();
    draw(v);
    return true;
  }

  function draw(v) {
    view = v;
    placed.clear();
    viewport.textContent = "";
    let x = 0;
    let count = 0;
    let totalMs = 0;
    const framed = v.owner !== null;
    const owner = framed ? nodeById.get(v.owner).node : null;
    v.graphs.forEach((gi, r) => {
      const L = done.get(gi);
      totalMs += L.ms;
      const top = framed ? 28 : 0;
      const group = svgEl("g", { class: "graph", transform: `translate(${x},${top})`, "data-graph": gi });
      if (framed) {
        group.append(svgEl("rect", {
          class: "frame", x: 0, y: -24, width: Math.max(L.width, 160), height: L.height + 24, rx: 6,
        }));
        const heading = svgEl("text", { class: "frame-title", x: 10, y: -8 });
        heading.textContent = owner.regions[r].name;
        group.append(heading);
      }
      const edges = svgEl("g", { class: "edges" });
      const nodes = svgEl("g", { class: "nodes" });
      group.append(edges, nodes);
      for (const e of data.graphs[gi].edges) {
        const pts = L.points(e[0], e[1]);
        const path = svgEl("path", { class: "edge", d: curve(pts), "marker-end": "url(#arrow)" });
        const tip = svgEl("title", {});
        tip.textContent = e[2];
        path.append(tip);
        edges.append(path);
      }
      for (const n of data.graphs[gi].nodes) {
        const pos = L.node(n.id);
        const nodeEl = drawNode(n, pos, L.sizes.get(n.id));
        nodes.append(nodeEl);
        placed.set(n.id, { x: x + pos.x, y: top + pos.y, el: nodeEl });
        if (n.kind === "op") count += 1;
      }
      viewport.append(group);
      x += Math.max(L.width, 160) + 48;
    });
    svg.setAttribute("data-node-count", String(count));
    svg.setAttribute("data-layout-ms", String(Math.round(totalMs)));
    svg.setAttribute("data-graph", v.graphs.join(","));
    renderCrumbs();
    highlightMatches();
    if (selected && placed.has(selected)) placed.get(selected).el.classList.add("selected");
  }

  function curve(pts) {
    if (!pts.length) return "";
    let d = `M${pts[0].x},${pts[0].y}`;
    if (pts.length === 2) return d + `L${pts[1].x},${pts[1].y}`;
    for (let i = 1; i < pts.length - 1; i++) {
      const mx = (pts[i].x + pts[i + 1].x) / 2;
      const my = (pts[i].y + pts[i + 1].y) / 2;
      d += i === pts.length - 2
        ? `Q${pts[i].x},${pts[i].y} ${pts[i + 1].x},${pts[i + 1].y}`
        : `Q${pts[i].x},${pts[i].y} ${mx},${my}`;
    }
    return d;
  }

  function drawNode(n, pos, size) {
    const cls = ["node", n.kind];
    if (markedIds.has(n.id)) cls.push("marked");
    if (n.regions) cls.push("has-regions");
    const g = svgEl("g", {
      class: cls.join(" "), "data-id": n.id,
      transform: `translate(${pos.x - size.width / 2},${pos.y - size.height / 2})`,
    });
    g.append(svgEl("rect", {
      width: size.width, height: size.height, rx: n.kind === "op" ? 4 : size.height / 2,
    }));
    size.lines.forEach((line, i) => {
      const text = svgEl("text", {
        class: i === 0 ? "label" : i === 1 && n.kind === "op" && n.name ? "name" : "type",
        x: n.kind === "op" ? PAD : size.width / 2, y: PAD + 11 + i * LINE,
      });
      if (n.kind !== "op") text.setAttribute("text-anchor", "middle");
      text.textContent = line;
      g.append(text);
    });
    if (n.regions) {
      const b = svgEl("g", { class: "expand", transform: `translate(${size.width - 20},4)` });
      b.append(svgEl("rect", { width: 16, height: 16, rx: 3 }));
      const plus = svgEl("text", { x: 8, y: 12.5, "text-anchor": "middle" });
      plus.textContent = "+";
      const tip = svgEl("title", {});
      tip.textContent = "open " + n.regions.map((r) => r.name).join(", ");
      b.append(plus, tip);
      g.append(b);
    }
    return g;
  }

  function renderCrumbs() {
    crumbs.textContent = "";
    const chain = [];
    let owner = view.owner;
    while (owner !== null) {
      chain.unshift(owner);
      const gi = nodeById.get(owner).graph;
      owner = data.graphs[gi].parent;
    }
    const root = el("a", "crumb", data.graphs[0].title);
    root.href = "#";
    root.addEventListener("click", (ev) => { ev.preventDefault(); open(null); });
    crumbs.append(root);
    for (const id of chain) {
      const n = nodeById.get(id).node;
      crumbs.append(el("span", "sep", "\u203a"));
      const a = el("a", "crumb", `${n.label}${n.name ? " " + n.name : ""}`);
      a.href = "#";
      a.addEventListener("click", (ev) => { ev.preventDefault(); open(id); });
      crumbs.append(a);
    }
  }

  async function open(owner) {
    if (await render(viewOf(owner))) fit();
  }

  // ---- pan and zoom ----------------------------------------------------------------------

  const t = { x: 0, y: 0, k: 1 };
  let frame = 0;
  function apply() {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      viewport.setAttribute("transform", `translate(${t.x},${t.y}) scale(${t.k})`);
    });
  }
  function applyNow() {
    if (frame) { cancelAnimationFrame(frame); frame = 0; }
    viewport.setAttribute("transform", `translate(${t.x},${t.y}) scale(${t.k})`);
  }

  function fit() {
    if (!view) return;
    const box = svg.getBoundingClientRect();
    let w = 0;
    let h = 0;
    for (const gi of view.graphs) {
      const L = done.get(gi);
      w += Math.max(L.width, 160) + 48;
      h = Math.max(h, L.height + (view.owner !== null ? 28 : 0));
    }
    w = Math.max(w - 48, 1);
    const k = Math.min(1, Math.min(box.width / w, box.height / Math.max(h, 1)) * 0.95);
    if (k >= 0.3 || view.owner !== null) {
      t.k = Math.max(k, 0.05);
      t.x = (box.width - w * t.k) / 2;
      t.y = Math.max(10, (box.height - h * t.k) / 2);
      applyNow();
      return;
    }
    // Too large to read whole: start at the first input, readable, as netron does.
    const start = data.graphs[view.graphs[0]].nodes.find((n) => n.kind === "input");
    const p = start ? placed.get(start.id) : null;
    t.k = 1;
    t.x = p ? box.width / 2 - p.x : 10;
    t.y = p ? 40 - p.y : 10;
    applyNow();
  }

  function centreOn(id) {
    const p = placed.get(id);
    if (!p) return;
    const box = svg.getBoundingClientRect();
    t.k = Math.max(t.k, 0.9);
    t.x = box.width / 2 - p.x * t.k;
    t.y = box.height / 2 - p.y * t.k;
    applyNow();
  }

  let drag = null;
  let dragged = false;
  svg.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, tx: t.x, ty: t.y };
    dragged = false;
    svg.classList.add("dragging");
  });
  window.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x;
    const dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) dragged = true;
    t.x = drag.tx + dx;
    t.y = drag.ty + dy;
    apply();
  });
  window.addEventListener("pointerup", () => {
    drag = null;
    svg.classList.remove("dragging");
  });
  svg.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const box = svg.getBoundingClientRect();
    const px = ev.clientX - box.left;
    const py = ev.clientY - box.top;
    const k = Math.min(4, Math.max(0.05, t.k * Math.exp(-ev.deltaY * 0.0015)));
    t.x = px - ((px - t.x) * k) / t.k;
    t.y = py - ((py - t.y) * k) / t.k;
    t.k = k;
    apply();
  }, { passive: false });

  svg.addEventListener("click", (ev) => {
    if (dragged) return;
    const expand = ev.target.closest(".expand");
    const nodeEl = ev.target.closest(".node");
    if (expand && nodeEl) {
      open(nodeEl.getAttribute("data-id"));
      return;
    }
    if (nodeEl) select(nodeEl.getAttribute("data-id"));
  });
  svg.addEventListener("dblclick", (ev) => {
    const nodeEl = ev.target.closest(".node.has-regions");
    if (nodeEl) open(nodeEl.getAttribute("data-id"));
  });
  fitButton.addEventListener("click", fit);
  window.addEventListener("resize", () => applyNow());

  // ---- the side panel --------------------------------------------------------------------

  function section(title) {
    const s = el("section", "section");
    s.append(el("h3", "", title));
    panel.append(s);
    return s;
  }
  function table(parent, rows, cls) {
    const tb = el("table", cls || "");
    for (const row of rows) {
      const tr = el("tr");
      row.forEach((cell, i) => tr.append(el(i === 0 ? "th" : "td", "", cell)));
      tb.append(tr);
    }
    parent.append(tb);
  }

  function showModel() {
    panel.textContent = "";
    panel.append(el("h2", "", data.title));
    const main = data.graphs[0];
    const ops = main.nodes.filter((n) => n.kind === "op").length;
    table(section("Model"), [
      ["level", data.level || "?"],
      ["function", "@" + data.function],
      ["source", data.source || ""],
      ["nodes", String(ops)],
      ["layout", layoutTimes[0] !== undefined ? `${layoutTimes[0]} ms (${layoutWhere()})` : "running\u2026"],
    ]);
    table(section("Inputs"), data.inputs.map((i) => [i.name, i.type]));
    table(section("Outputs"), data.outputs.map((o) => [o.name, o.type]));
    panel.append(el("p", "hint", "Click a node for its attributes; drag to pan, wheel to zoom."));
  }

  function select(id) {
    if (selected && placed.has(selected)) placed.get(selected).el.classList.remove("selected");
    selected = id;
    if (placed.has(id)) placed.get(id).el.classList.add("selected");
    const n = nodeById.get(id).node;
    panel.textContent = "";
    const head = el("h2", "", n.label);
    panel.append(head);
    panel.setAttribute("data-node", id);
    const props = [["kind", n.kind]];
    if (n.op) props.push(["op", n.op]);
    if (n.name) props.push(["name", n.name]);
    if (n.loc) props.push(["location", n.loc]);
    if (markedIds.has(id)) props.push(["marked", markedIds.get(id)]);
    table(section("Node"), props, "props");
    if (n.attrs && n.attrs.length) table(section("Attributes"), n.attrs, "attrs");
    if (n.operands && n.operands.length) {
      table(section("Inputs"), n.operands.map((o) => [o[0], o[1] + (o[2] ? "\n" + o[2] : "")]), "operands");
    }
    if (n.results && n.results.length) table(section("Outputs"), n.results, "results");
    if (n.regions) {
      const s = section("Regions");
      for (const r of n.regions) {
        const b = el("button", "open-region", "open " + r.name);
        b.addEventListener("click", () => open(id));
        s.append(b);
      }
    }
  }

  // ---- search ----------------------------------------------------------------------------

  let matches = [];
  let matchAt = -1;
  function highlightMatches() {
    const ids = new Set(matches);
    for (const [id, p] of placed) p.el.classList.toggle("match", ids.has(id));
  }
  search.addEventListener("input", () => {
    const q = search.value.trim().toLowerCase();
    matches = [];
    matchAt = -1;
    if (q) {
      for (const [id, entry] of nodeById) {
        const n = entry.node;
        const hay = `${n.name || ""}\u0000${n.label || ""}\u0000${n.op || ""}`.toLowerCase();
        if (hay.includes(q)) matches.push(id);
      }
    }
    matchesEl.textContent = q ? `${matches.length} match${matches.length === 1 ? "" : "es"}` : "";
    highlightMatches();
  });
  search.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" || !matches.length) return;
    matchAt = (matchAt + (ev.shiftKey ? matches.length - 1 : 1)) % matches.length;
    reveal(matches[matchAt]);
  });

  async function reveal(id) {
    const gi = nodeById.get(id).graph;
    const owner = gi === 0 ? null : data.graphs[gi].parent;
    select(id);
    if (!view || view.owner !== owner) {
      if (!(await render(viewOf(owner)))) return;
    }
    centreOn(id);
  }

  // ---- marks (from rung compare) ---------------------------------------------------------

  function showBanner() {
    const names = Object.keys(marks);
    if (!names.length) {
      banner.hidden = true;
      return;
    }
    document.body.classList.add("has-banner");
    banner.append(el("strong", "", names.length === 1 ? "Marked node: " : "Marked nodes: "));
    names.forEach((name, i) => {
      if (i) banner.append(document.createTextNode("; "));
      const id = markFirst.get(name);
      const a = el(id ? "a" : "span", id ? "mark-link" : "mark-missing", name);
      if (id) {
        a.href = "#";
        a.addEventListener("click", (ev) => { ev.preventDefault(); reveal(id); });
      }
      banner.append(a);
      const note = marks[name] + (id ? "" : " (no node of this name in the graph)");
      if (note) banner.append(document.createTextNode(" \u2014 " + note));
    });
  }

  // ---- start -----------------------------------------------------------------------------

  function layoutWhere() {
    return worker === false ? "main thread" : "worker";
  }

  // The panel, banner and search work at once; the drawing follows when its layout is done.
  async function start() {
    showBanner();
    showModel();
    const drawn = await render(viewOf(null));
    await layout(0);
    if (drawn) fit();
    if (!selected) showModel();
    const first = Object.keys(marks).map((name) => markFirst.get(name)).find((id) => id);
    if (first) await reveal(first);
    svg.setAttribute("data-layout-wall-ms", String(layoutWall[0]));
    document.body.setAttribute("data-layout", layoutWhere());
    window.rungView = {
      layoutMs: layoutTimes,
      layoutWallMs: layoutWall,
      nodeCount: Number(svg.getAttribute("data-node-count")),
      open,
      reveal,
    };
    document.body.setAttribute("data-ready", "1");
  }
  start();
})();
