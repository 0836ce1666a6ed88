// The page `spindle status --http` serves at "/": one self-contained HTML document (no
// external script, style or font) whose script polls /status.json every interval and draws
// each topic's samples/s over the last two minutes on a <canvas>, with the view, the topics
// (their rates in `td.rate[data-topic]`, which the tests read back), the subgroups and each
// member's lag in tables. Names from the domain are set as text, never as markup.
#pragma once

#include <string_view>

namespace spindle_cli {

inline constexpr std::string_view kStatusPage = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>spindle status</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 16px 24px; color: #222; background: #fafafa; }
  h1 { font-size: 18px; margin: 0 0 4px; }
  h2 { font-size: 15px; margin: 18px 0 6px; }
  #meta { color: #666; }
  #error { color: #b00; }
  table { border-collapse: collapse; }
  th, td { text-align: left; padding: 2px 12px 2px 0; }
  th { border-bottom: 1px solid #ccc; font-weight: 600; }
  td.num, th.num { text-align: right; }
  canvas { background: #fff; border: 1px solid #ddd; }
</style>
</head>
<body>
<h1 id="view">spindle status</h1>
<div id="meta">waiting for /status.json</div>
<div id="error"></div>
<h2>samples/s per topic</h2>
<canvas id="chart" width="940" height="220"></canvas>
<h2>topics</h2>
<table><thead><tr><th>topic</th><th>type</th><th class="num">samples/s</th>
<th class="num">bytes/s</th><th class="num">samples</th><th>subgroups</th></tr></thead>
<tbody id="topics"></tbody></table>
<h2>members</h2>
<table><thead><tr><th>node</th><th>host</th><th class="num">port</th><th class="num">pid</th>
<th></th></tr></thead><tbody id="members"></tbody></table>
<h2>subgroups</h2>
<table><thead><tr><th>#</th><th>name</th><th>ordering</th><th>members</th><th>senders</th>
<th>listeners</th></tr></thead><tbody id="subgroups"></tbody></table>
<h2>reader lag</h2>
<table><thead><tr><th>subgroup</th><th>node</th><th>role</th><th class="num">delivered</th>
<th class="num">lag</th></tr></thead><tbody id="readers"></tbody></table>
<script>
"use strict";
const kPoints = 120;
const kColors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                 "#17becf", "#7f7f7f", "#bcbd22"];
const history = new Map();  // topic -> samples/s, oldest first

function human(v) {
  if (v === null || v === undefined) return "-";
  const units = ["", "k", "M", "G"];
  let i = 0;
  while (Math.abs(v) >= 1000 && i < units.length - 1) { v /= 1000; i++; }
  return v.toFixed(1) + (units[i] ? " " + units[i] : "");
}

function fill(id, rows) {
  const body = document.getElementById(id);
  body.replaceChildren();
  for (const cells of rows) {
    const tr = document.createElement("tr");
    for (const c of cells) {
      const td = document.createElement("td");
      const cell = (typeof c === "object" && c !== null) ? c : {text: c};
      td.textContent = cell.text === null || cell.text === undefined ? "-" : String(cell.text);
      if (cell.cls) td.className = cell.cls;
      if (cell.topic !== undefined) td.dataset.topic = cell.topic;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
}

function draw() {
  const canvas = document.getElementById("chart");
  const g = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, left = 56, bottom = 20, top = 10;
  g.clearRect(0, 0, w, h);
  let max = 1;
  for (const points of history.values()) for (const p of points) max = Math.max(max, p);
  g.strokeStyle = "#ccc"; g.fillStyle = "#666"; g.font = "11px sans-serif"; g.lineWidth = 1;
  for (let k = 0; k <= 4; k++) {
    const y = top + (h - top - bottom) * (1 - k / 4);
    g.beginPath(); g.moveTo(left, y); g.lineTo(w - 8, y); g.stroke();
    g.fillText(human(max * k / 4), 4, y + 4);
  }
  let n = 0;
  for (const [topic, points] of history) {
    const color = kColors[n % kColors.length];
    g.strokeStyle = color; g.lineWidth = 2; g.beginPath();
    points.forEach((p, i) => {
      const x = left + (w - 8 - left) * (kPoints - points.length + i) / (kPoints - 1);
      const y = top + (h - top - bottom) * (1 - p / max);
      if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
    });
    g.stroke();
    g.fillStyle = color;
    g.fillText(topic, left + 8 + 120 * n, h - 5);
    n++;
  }
}

function render(s) {
  const v = s.view;
  document.getElementById("view").textContent =
      "domain " + s.domain + ": view " + v.epoch + ", leader node " + v.leader + ", " +
      s.members.length + " members" + (v.halted ? " (halted: " + v.halted + ")" : "");
  document.getElementById("meta").textContent =
      "seen by node " + s.self + " over " + s.transport + ", every " + s.interval + " s; updated " +
      new Date().toLocaleTimeString();
  document.getElementById("error").textContent = "";
  fill("topics", s.topics.map(t => [t.name, t.type,
      {text: t.samples_per_s === null ? null : t.samples_per_s.toFixed(1), cls: "num rate",
       topic: t.name},
      {text: t.bytes_per_s === null ? null : human(t.bytes_per_s) + "B/s", cls: "num bytes"},
      {text: t.samples, cls: "num"}, t.subgroups.join(" ")]));
  fill("members", s.members.map(m => [m.node, m.host, {text: m.port, cls: "num"},
      {text: m.pid || null, cls: "num"},
      [m.leader ? "leader" : "", m.self ? "this status" : "", m.joining ? "joining" : "",
       m.suspected ? "suspected" : ""].filter(x => x).join(", ")]));
  fill("subgroups", s.subgroups.map(g => [g.index, g.name, g.ordering, g.members.join(" "),
      g.senders.join(" "), g.listeners.join(" ")]));
  fill("readers", s.readers.map(r => [r.name, r.node, r.role + (r.left_behind ? " (left behind)" : ""),
      {text: r.delivered, cls: "num"}, {text: r.lag, cls: "num"}]));
  for (const t of s.topics) {
    if (t.samples_per_s === null) continue;
    const points = history.get(t.name) || [];
    points.push(t.samples_per_s);
    if (points.length > kPoints) points.shift();
    history.set(t.name, points);
  }
  draw();
}

async function poll() {
  let next = 1000;
  try {
    const r = await fetch("/status.json", {cache: "no-store"});
    if (!r.ok) throw new Error("HTTP " + r.status);
    const s = await r.json();
    render(s);
    next = Math.max(100, 1000 * s.interval);
  } catch (e) {
    document.getElementById("error").textContent = "/status.json: " + e.message;
  }
  setTimeout(poll, next);
}
poll();
</script>
</body>
</html>
)html";

}  // namespace spindle_cli
