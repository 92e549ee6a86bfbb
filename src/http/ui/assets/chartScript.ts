// The charts, drawn in the browser as inline SVG from the numbers the page
// carries in each `<figure data-chart>` (no chart library, nothing fetched).
// Two kinds: stacked bars per minute (throughput by outcome) and a line
// (backlog). The figure's caption and its data table say the same in words.
// Plain browser JavaScript kept as text; it must not contain a backtick or
// a dollar-brace (the template it lives in would read them).
export const CHART_SCRIPT = String.raw`
var SVG = 'http://www.w3.org/2000/svg';
var W = 430, H = 150, L = 38, R = 8, T = 10, B = 20;
function el(name, attrs, parent) {
  var e = document.createElementNS(SVG, name);
  for (var k in attrs) e.setAttribute(k, String(attrs[k]));
  if (parent) parent.appendChild(e);
  return e;
}
function niceMax(v) {
  if (v <= 4) return 4;
  var p = Math.pow(10, Math.floor(Math.log10(v)));
  var steps = [1, 2, 2.5, 5, 10];
  for (var i = 0; i < steps.length; i++) if (steps[i] * p >= v) return steps[i] * p;
  return 10 * p;
}
function hhmm(iso) { return iso.slice(11, 16); }
function frame(svg, max, labels) {
  var plotH = H - T - B;
  [0, 0.5, 1].forEach(function (f) {
    var y = T + plotH - f * plotH;
    el('line', { x1: L, x2: W - R, y1: y, y2: y, 'class': f === 0 ? 'c-axis' : 'c-grid' }, svg);
    var t = el('text', { x: L - 4, y: y + 3, 'text-anchor': 'end', 'class': 'c-label' }, svg);
    t.textContent = String(Math.round(f * max * 10) / 10);
  });
  var n = labels.length;
  [0, Math.floor((n - 1) / 2), n - 1].forEach(function (i, j) {
    var x = L + (i + 0.5) * (W - L - R) / n;
    var t = el('text', { x: x, y: H - 5, 'text-anchor': j === 0 ? 'start' : j === 2 ? 'end' : 'middle', 'class': 'c-label' }, svg);
    t.textContent = j === 2 ? 'now' : hhmm(labels[i]) + ' UTC';
  });
}
function bars(svg, data) {
  var n = data.labels.length, plotH = H - T - B, slot = (W - L - R) / n;
  var totals = data.labels.map(function (_, i) {
    return data.series.reduce(function (s, x) { return s + x.values[i]; }, 0);
  });
  var max = niceMax(Math.max.apply(null, totals.concat([0])));
  frame(svg, max, data.labels);
  data.labels.forEach(function (label, i) {
    var y = T + plotH, parts = [];
    var g = el('g', {}, svg);
    data.series.forEach(function (s) {
      var v = s.values[i];
      if (!v) return;
      var h = v / max * plotH;
      y -= h;
      el('rect', { x: L + i * slot + 0.5, y: y, width: Math.max(slot - 1, 1), height: h, 'class': 'c-' + s.name }, g);
      parts.push(v + ' ' + s.name);
    });
    if (parts.length) el('title', {}, g).textContent = hhmm(label) + ' UTC: ' + parts.join(', ');
  });
}
function line(svg, data) {
  var n = data.labels.length, plotH = H - T - B, slot = (W - L - R) / n;
  var max = niceMax(Math.max.apply(null, data.values.concat([0])));
  frame(svg, max, data.labels);
  var pts = data.values.map(function (v, i) { return [L + (i + 0.5) * slot, T + plotH - v / max * plotH]; });
  if (!pts.length) return;
  var d = pts.map(function (p, i) { return (i ? 'L' : 'M') + p[0].toFixed(1) + ' ' + p[1].toFixed(1); }).join(' ');
  el('path', { d: d + ' L' + pts[pts.length - 1][0].toFixed(1) + ' ' + (T + plotH) + ' L' + pts[0][0].toFixed(1) + ' ' + (T + plotH) + ' Z', 'class': 'c-area' }, svg);
  el('path', { d: d, 'class': 'c-line' }, svg);
  pts.forEach(function (p, i) {
    var c = el('circle', { cx: p[0], cy: p[1], r: 2.5, 'class': 'c-dot', fill: 'transparent' }, svg);
    el('title', {}, c).textContent = hhmm(data.labels[i]) + ' UTC: ' + data.values[i] + ' outstanding';
  });
}
function drawCharts(root) {
  var figures = root.querySelectorAll('figure[data-chart]');
  for (var i = 0; i < figures.length; i++) {
    var fig = figures[i], data;
    try { data = JSON.parse(fig.getAttribute('data-chart')); } catch (e) { continue; }
    var old = fig.querySelector('svg');
    if (old) old.remove();
    var svg = el('svg', { viewBox: '0 0 ' + W + ' ' + H, 'aria-hidden': 'true', focusable: 'false' });
    if (data.kind === 'bars') bars(svg, data); else line(svg, data);
    fig.insertBefore(svg, fig.querySelector('figcaption').nextSibling);
  }
}
`;
