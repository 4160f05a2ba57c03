#!/usr/bin/env bash
# Renders a sweep's report.html in headless Chromium at 1280 px wide, as a
# person opening it in a browser sees it, and fails on a render error:
# Chromium failing, a page whose charts did not all become SVG in the
# browser's DOM, text drawn under 11 px, a panel without its axis names
# (or one counting servers as switches), a chart without a drawn legend,
# an algorithm not in its own colour (the same in every report), or an
# empty screenshot. CI runs it on the default,
# capacity and failures reports; docs/report.png is its output for the
# default sweep:
#
#   scripts/render-report.sh sweep-out/report.html docs/report.png 2200
#
# usage: render-report.sh REPORT.html OUT.png [HEIGHT]   (needs Debian's
# chromium-headless-shell, or chromium)
set -euo pipefail
report=$(realpath "$1")
out=$2
height=${3:-3000}
browser=$(command -v chromium-headless-shell || command -v chromium || true)
if [[ -z $browser ]]; then
    echo "render-report.sh: no chromium-headless-shell or chromium on PATH (apt-get install chromium-headless-shell)" >&2
    exit 1
fi
# Root in CI: Chromium's sandbox needs a user namespace it may not get.
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="1280,$height")
dom=$(mktemp)
trap 'rm -f "$dom"' EXIT
"$browser" "${flags[@]}" --dump-dom "file://$report" > "$dom" 2>/dev/null
want=$(grep -o '<svg ' "$report" | wc -l)
got=$(grep -o '<svg ' "$dom" | wc -l)
figures=$(grep -o '<figure class="chart"' "$dom" | wc -l)
if (( want == 0 || got != want || figures == 0 )); then
    echo "render-report.sh: $1: the browser's page holds $got of $want charts' SVG panels ($figures figures)" >&2
    exit 1
fi
# The smallest text as rendered: a copy of the page with a script that,
# once laid out, writes the least font size on screen (an SVG label's size
# scaled by the panel's drawn width) into the DOM.
probe=$(mktemp --suffix=.html)
trap 'rm -f "$dom" "$probe"' EXIT
python3 - "$report" "$probe" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
js = """<script>
window.addEventListener('load', function () {
  var min = 1e9, what = '';
  document.querySelectorAll('body *').forEach(function (e) {
    var own = Array.prototype.some.call(e.childNodes, function (n) {
      return n.nodeType == 3 && n.textContent.trim() != '';
    });
    if (!own) return;
    var r = e.getBoundingClientRect();
    if (r.width == 0 || r.height == 0) return;
    var fs = parseFloat(getComputedStyle(e).fontSize);
    if (e instanceof SVGElement) {
      var m = e.getScreenCTM();
      fs = fs * Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
    }
    if (fs < min) { min = fs; what = e.tagName + ' "' + e.textContent.trim().slice(0, 40) + '"'; }
  });
  var d = document.createElement('div');
  d.id = 'tagger-min-font';
  d.textContent = min.toFixed(2) + ' px: ' + what;
  document.body.appendChild(d);
  // Axes, legend and palette, as drawn: every panel names both axes and
  // none counts servers as switches; every chart has a legend whose marks
  // are drawn; an algorithm has its own colour, the same in every chart
  // and every report (the table below is src/report/mod.rs's algo_slot).
  var fixed = {'auto': '#1f77b4', 'clos': '#ff7f0e', 'exact': '#2ca02c',
               'greedy': '#d62728', 'search': '#9467bd',
               'brute (baseline)': '#8c564b', 'greedy-ttl (baseline)': '#7f7f7f'};
  var bad = [], seen = {};
  document.querySelectorAll('figure.chart').forEach(function (f, n) {
    var cap = (f.querySelector('figcaption b') || {}).textContent || ('chart ' + n);
    f.querySelectorAll('svg').forEach(function (svg) {
      var words = Array.prototype.filter.call(svg.querySelectorAll('text'), function (t) {
        return /[a-z]{3}/.test(t.textContent) && t.getBoundingClientRect().width > 0;
      }).map(function (t) { return t.textContent.trim(); });
      if (words.length < 3) bad.push(cap + ': a panel names ' + words.length + ' of title and two axes');
      words.forEach(function (w) {
        if (/switches and servers/.test(w)) bad.push(cap + ': an axis says "' + w + '"');
      });
    });
    var items = f.querySelectorAll('ul.legend li');
    if (items.length == 0) bad.push(cap + ': no legend');
    items.forEach(function (li) {
      var mark = li.querySelector('span');
      var name = li.textContent.trim();
      var c = mark ? getComputedStyle(mark).getPropertyValue('--c').trim() : '';
      var r = mark ? mark.getBoundingClientRect() : {width: 0, height: 0};
      if (r.width == 0 || r.height == 0) bad.push(cap + ': legend mark of "' + name + '" not drawn');
      if (fixed[name] && fixed[name] != c) bad.push(cap + ': "' + name + '" is ' + c + ', not ' + fixed[name]);
      if (seen[name] && seen[name] != c && fixed[name]) bad.push(cap + ': "' + name + '" changes colour');
      seen[name] = c;
    });
  });
  var k = document.createElement('div');
  k.id = 'tagger-check';
  k.textContent = bad.length == 0 ? 'ok' : bad.slice(0, 5).join('; ');
  document.body.appendChild(k);
});
</script>"""
i = page.rindex("</body>")
open(sys.argv[2], "w", encoding="utf-8").write(page[:i] + js + page[i:])
PY
probed=$("$browser" "${flags[@]}" --dump-dom "file://$probe" 2>/dev/null || true)
min=$(grep -o '<div id="tagger-min-font">[^<]*' <<<"$probed" | sed 's/.*>//' || true)
check=$(grep -o '<div id="tagger-check">[^<]*' <<<"$probed" | sed 's/.*>//' || true)
if [[ $check != ok ]]; then
    echo "render-report.sh: $1: ${check:-the axes, legend and palette check did not run}" >&2
    exit 1
fi
if [[ -z $min ]] || ! awk -v m="${min%% *}" 'BEGIN { exit !(m >= 11 && m < 1e9) }'; then
    echo "render-report.sh: $1: the smallest text on the page is ${min:-unmeasured} at 1280 px (at least 11 px wanted)" >&2
    exit 1
fi
"$browser" "${flags[@]}" --screenshot="$(realpath -m "$out")" "file://$report" 2>/dev/null
size=$(stat -c %s "$out")
if (( size < 20000 )); then
    echo "render-report.sh: $out is $size bytes: nothing was drawn" >&2
    exit 1
fi
echo "rendered $1: $figures charts, $got panels, axes, legends and palette checked, smallest text $min -> $out ($size bytes)"
