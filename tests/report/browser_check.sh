#!/bin/sh
# Opens a kiln report in headless Chromium (Debian's `chromium`) and checks what a person
# would see: the page's script ran without a console message, the curves have length and
# width on the page, the precision switch marker is drawn inside its chart, the hover
# read-out answers; then saves a screenshot.
#
#   browser_check.sh check      KILN CHROMIUM DATA_DIR OUT_DIR
#       makes OUT_DIR/report.html with `kiln report` from the runs in DATA_DIR (the
#       --metrics-out files of three 1200-step MLP runs: original, fast1|step|0.9 and
#       fast|step|0.9, kiln train --log-every 20 --eval-every 200), checks it,
#       and saves OUT_DIR/report.png
#   browser_check.sh self-test  KILN CHROMIUM DATA_DIR OUT_DIR
#       passes only if the check FAILS on a page with a script error, on one without the
#       switch markers and on one missing a curve (the check can fail)
set -eu
mode=$1 kiln=$2 chromium=$3 data=$4 out=$5
mkdir -p "$out"
out=$(cd "$out" && pwd)
harness=$(cd "$(dirname "$0")" && pwd)/browser_harness.js

browser() {  # browser LOG ARGS...: chromium headless as root in a container, quiet
  log=$1
  shift
  timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
    --user-data-dir="$out/profile" --enable-logging=stderr --v=0 "$@" 2>"$log"
}

# check_page REPORT.html: 0 if the page passes, 1 with the reasons on stderr.
check_page() {
  page=$1
  checked="$out/$(basename "$page" .html)-checked.html"
  # The harness runs right after the report's own script, before the last line (</body></html>).
  { sed '$d' "$page"; echo '<script>'; cat "$harness"; echo '</script>'; tail -n 1 "$page"; } >"$checked"
  browser "$out/console.log" --virtual-time-budget=3000 --dump-dom "file://$checked" >"$out/dom.html" || {
    echo "browser_check: chromium failed on $page:" >&2
    tail -5 "$out/console.log" >&2
    return 1
  }
  status=0
  if grep -E ':CONSOLE[:(]' "$out/console.log" >&2; then
    echo "browser_check: FAIL: the page wrote to the console (above): a script error or warning" >&2
    status=1
  fi
  result=$(sed -n 's#.*<pre id="kiln-browser-check">\([^<]*\)</pre>.*#\1#p' "$out/dom.html")
  case "$result" in
    PASS*) echo "browser_check: $result" ;;
    "") echo "browser_check: FAIL: the check's harness did not run (see $out/dom.html)" >&2; status=1 ;;
    *) echo "browser_check: $result" >&2; status=1 ;;
  esac
  return $status
}

"$kiln" report "$data/original.jsonl" "$data/fast1.jsonl" "$data/fast.jsonl" \
  --label original --label 'fast1|step|0.9' --label 'fast|step|0.9' --title 'kiln report: MLP on Fashion-MNIST' \
  -o "$out/report.html"

case "$mode" in
  check)
    check_page "$out/report.html"
    rm -f "$out/report.png"
    browser "$out/screenshot.log" --hide-scrollbars --window-size=1280,2200 --screenshot="$out/report.png" \
      "file://$out/report.html" >/dev/null
    size=$(stat -c %s "$out/report.png" 2>/dev/null || echo 0)
    if [ "$size" -lt 20000 ]; then
      echo "browser_check: FAIL: screenshot $out/report.png is missing or blank ($size bytes)" >&2
      exit 1
    fi
    echo "browser_check: screenshot $out/report.png ($size bytes)"
    ;;
  self-test)
    sed 's#</body>#<script>null.x;</script></body>#' "$out/report.html" >"$out/script-error.html"
    sed 's#class="switch-marker"#class="gone"#g' "$out/report.html" >"$out/no-marker.html"
    sed 's#<path class="curve smooth"[^>]*/>##' "$out/report.html" >"$out/no-curve.html"
    for broken in script-error no-marker no-curve; do
      if check_page "$out/$broken.html" 2>"$out/$broken.err"; then
        echo "browser_check: FAIL: the check passed a page with $broken" >&2
        exit 1
      fi
      echo "browser_check: $broken caught: $(tail -1 "$out/$broken.err")"
    done
    ;;
  *) echo "browser_check: unknown mode '$mode' (check, self-test)" >&2; exit 2 ;;
esac
