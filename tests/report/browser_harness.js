(function () {
  'use strict';
  var problems = [];
  function fail(m) { problems.push(m); }
  if (document.documentElement.dataset.kilnScript !== 'ready') fail('the report script did not finish');
  var curves = document.querySelectorAll('#loss path.curve.smooth');
  if (curves.length < 3) fail('the loss chart has ' + curves.length + ' smoothed curves, expected one per run (3)');
  curves.forEach(function (p) {
    var b = p.getBoundingClientRect();
    if (!(b.width > 100 && p.getTotalLength() > 100)) fail('curve "' + p.dataset.label + '" is not drawn (width ' + b.width + ')');
    if (getComputedStyle(p).visibility !== 'visible' || getComputedStyle(p).display === 'none') fail('curve hidden');
  });
  var markers = document.querySelectorAll('#loss line.switch-marker');
  if (markers.length < 2) fail('the loss chart has ' + markers.length + ' switch markers, expected 2');
  markers.forEach(function (l) {
    var r = l.getBoundingClientRect(), chart = l.ownerSVGElement.getBoundingClientRect();
    if (!(r.height > 50)) fail('a switch marker is not drawn (height ' + r.height + ')');
    if (r.left < chart.left || r.right > chart.right) fail('a switch marker is outside its chart');
    var label = l.parentNode.querySelector('text.switch-label');
    if (!label || label.getBoundingClientRect().width < 50 || label.textContent.indexOf('requested') < 0)
      fail('a switch marker has no readable label');
  });
  if (document.querySelectorAll('#rate path.curve').length < 3) fail('the steps/s chart has too few curves');
  if (document.querySelectorAll('rect.low-phase').length < 2) fail('the low-precision phases are not shaded');
  var svg = document.querySelector('#loss svg');
  if (svg) {
    var box = svg.getBoundingClientRect();
    svg.dispatchEvent(new MouseEvent('mousemove', {clientX: box.left + box.width / 2, clientY: box.top + box.height / 2, bubbles: true}));
    var readout = document.querySelector('#loss .readout');
    if (!readout || readout.textContent.indexOf('fast1|step|0.9:') < 0) fail('no hover read-out');
  }
  if (document.querySelectorAll('table.summary tbody tr').length < 10) fail('the summary table is missing');
  var pre = document.createElement('pre');
  pre.id = 'kiln-browser-check';
  pre.textContent = problems.length ? 'FAIL: ' + problems.join('; ') :
      'PASS: ' + curves.length + ' loss curves and ' + markers.length + ' switch markers drawn, read-out answers';
  document.body.appendChild(pre);
})();
