#include "report/page_assets.h"

namespace kiln::report {

const char* const kPageStyle = R"css(
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: #1a1a1a; background: #fff; max-width: 1000px; margin: 0 auto; padding: 16px 20px 40px; }
h1 { font-size: 1.5em; margin: 0.2em 0; }
h2 { font-size: 1.15em; margin: 1.6em 0 0.4em; border-bottom: 1px solid #ddd; }
.meta, .note { font-size: 12px; color: #555; margin: 0.2em 0; }
.legend { list-style: none; padding: 0; margin: 0.6em 0; display: flex; flex-wrap: wrap; gap: 6px 22px; }
.legend svg { width: 44px; height: 12px; vertical-align: middle; margin-right: 6px; }
.legend .mode { color: #555; }
.chart { margin: 0 0 20px; }
figcaption { font-weight: 600; margin: 0.2em 0; }
.chart svg { width: 100%; height: auto; display: block; }
.grid { stroke: #e6e6e6; stroke-width: 1; }
.frame { fill: none; stroke: #888; }
.tick { font-size: 11px; fill: #444; }
.axis-label { font-size: 12px; fill: #222; }
.curve { fill: none; stroke-width: 2; stroke-linejoin: round; stroke-linecap: round; }
.curve.raw { stroke-width: 1; opacity: 0.35; }
.curve.line { stroke-width: 1.5; }
.curve.line.low { stroke-width: 3; }
.low-phase { opacity: 0.08; }
.low-phase-stripe { opacity: 0.75; }
.switch-marker { stroke-width: 1.5; stroke-dasharray: 5 3; }
.switch-label { font-size: 11px; font-weight: 600; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
.guide { stroke: #555; stroke-width: 1; }
.readout { font-size: 12px; min-height: 1.5em; color: #333; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #e6e6e6; padding: 4px 8px; text-align: left; vertical-align: top; }
thead th { border-bottom: 2px solid #bbb; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.skipped { background: #fff4e5; border-left: 4px solid #E69F00; padding: 8px 12px; }
@media print {
  body { max-width: none; padding: 0; font-size: 10.5pt; }
  .readout { display: none; }
  .chart, table, .legend { break-inside: avoid; }
  h2 { break-after: avoid; }
}
)css";

const char* const kPageScript = R"js(
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  function scale(text) { var s = text.split(' ').map(Number); return {lo: s[0], hi: s[1], p0: s[2], p1: s[3], log: s[4] === 1}; }
  function invert(s, px) {
    var a = s.log ? Math.log10(s.lo) : s.lo, b = s.log ? Math.log10(s.hi) : s.hi;
    var v = a + (px - s.p0) / (s.p1 - s.p0) * (b - a);
    return s.log ? Math.pow(10, v) : v;
  }
  function points(d) {
    return d.split(/[ML]/).filter(function (t) { return t.trim() !== ''; }).map(function (t) {
      var xy = t.trim().split(','); return [Number(xy[0]), Number(xy[1])];
    });
  }
  function number(v) { return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(3) : v.toPrecision(3); }
  document.querySelectorAll('figure.chart').forEach(function (figure) {
    var svg = figure.querySelector('svg');
    var sx = scale(svg.dataset.x), sy = scale(svg.dataset.y), xLabel = svg.dataset.xLabel;
    var byLabel = {};
    svg.querySelectorAll('path.curve:not(.raw)').forEach(function (p) {
      var l = p.dataset.label;
      (byLabel[l] = byLabel[l] || {colour: p.getAttribute('stroke'), pts: []}).pts =
          byLabel[l].pts.concat(points(p.getAttribute('d')));
    });
    var readout = document.createElement('div');
    readout.className = 'readout';
    figure.appendChild(readout);
    var guide = document.createElementNS(NS, 'line');
    guide.setAttribute('class', 'guide');
    guide.setAttribute('visibility', 'hidden');
    svg.appendChild(guide);
    svg.addEventListener('mousemove', function (e) {
      var pt = svg.createSVGPoint();
      pt.x = e.clientX; pt.y = e.clientY;
      var at = pt.matrixTransform(svg.getScreenCTM().inverse());
      var parts = [];
      Object.keys(byLabel).forEach(function (label) {
        var best = null;
        byLabel[label].pts.forEach(function (p) { if (!best || Math.abs(p[0] - at.x) < Math.abs(best[0] - at.x)) best = p; });
        if (best) parts.push(label + ': ' + number(invert(sy, best[1])) + ' at ' + number(invert(sx, best[0])));
      });
      guide.setAttribute('x1', at.x); guide.setAttribute('x2', at.x);
      guide.setAttribute('y1', Math.min(sy.p0, sy.p1)); guide.setAttribute('y2', Math.max(sy.p0, sy.p1));
      guide.setAttribute('visibility', 'visible');
      readout.textContent = parts.length ? xLabel + ' ' + number(invert(sx, at.x)) + ' — ' + parts.join('; ') : '';
    });
    svg.addEventListener('mouseleave', function () { guide.setAttribute('visibility', 'hidden'); readout.textContent = ''; });
  });
  document.documentElement.dataset.kilnScript = 'ready';
})();
)js";

}  // namespace kiln::report
