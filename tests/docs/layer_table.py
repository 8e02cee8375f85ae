#!/usr/bin/env python3
"""docs/architecture.md's table of layers is the layering test's (kLayerLevel in
tests/architecture/layering_test.cpp), so the page cannot drift from the rule the build
enforces: this check fails when the table between the page's layer-table markers is not
what the test's table gives, and `--write` rewrites the page's table from the test.

    layer_table.py REPO [--write]

One row per source line of kLayerLevel: its level, its layers and its comment (a comment
continued on the lines below joins it). Before reading the repository the check runs on
a small table of its own, so that a parser that reads nothing cannot pass.
"""
import os
import re
import sys

TEST = "tests/architecture/layering_test.cpp"
PAGE = "docs/architecture.md"
BEGIN = "<!-- layer-table:begin: generated from %s by tests/docs/layer_table.py --write -->" % TEST
END = "<!-- layer-table:end -->"
HEADER = ["| level | layer | what it holds |", "|---:|---|---|"]
ENTRY = re.compile(r'\{\s*"([^"]+)"\s*,\s*(-?\d+)\s*\}')


def layer_rows(source):
    """[(level, [layers], comment)] of kLayerLevel in the test's source, lowest first."""
    m = re.search(r"kLayerLevel\s*=\s*\{(.*?)\n\};", source, re.S)
    if not m:
        sys.exit("layer_table: %s has no kLayerLevel table" % TEST)
    rows = []
    for line in m.group(1).split("\n"):
        code, _, comment = line.partition("//")
        entries = ENTRY.findall(code)
        comment = comment.strip()
        if entries:
            levels = {int(level) for _, level in entries}
            if len(levels) != 1:
                sys.exit("layer_table: one line of kLayerLevel holds several levels: " + line.strip())
            rows.append([levels.pop(), [name for name, _ in entries], comment])
        elif comment and rows and not code.strip():
            rows[-1][2] = (rows[-1][2] + " " + comment).strip()
    if not rows:
        sys.exit("layer_table: kLayerLevel in %s has no entries" % TEST)
    return sorted(rows, key=lambda r: r[0])  # sorted() keeps the test's order within a level


def table(rows):
    return HEADER + ["| %d | %s | %s |" % (level, ", ".join("`%s`" % n for n in names), comment)
                     for level, names, comment in rows]


def page_table(page):
    """The lines between the page's markers, or None when the markers are missing."""
    if BEGIN not in page or END not in page:
        return None
    return [line for line in page.split(BEGIN, 1)[1].split(END, 1)[0].split("\n") if line.strip()]


def differences(want, have):
    """What differs between the test's table and the page's, one line each."""
    if have is None:
        return ["%s lacks the markers %s ... %s around the table of layers" % (PAGE, BEGIN, END)]
    out = ["  the test has:  " + row for row in want if row not in have]
    out += ["  the page has:  " + row for row in have if row not in want]
    if not out and want != have:
        out = ["  the same rows in another order"]
    return out


def self_test():
    source = ('const std::map<std::string, int> kLayerLevel = {\n'
              '    {"ir", 0},     {"process", 0},  // the graph IR; the host process\n'
              '    {"base", -1},                    // errors, settings\n'
              '    {"formats", 1},                  // file formats;\n'
              '                                     // JSON reading\n'
              '};\n')
    want = table(layer_rows(source))
    expected = HEADER + ["| -1 | `base` | errors, settings |", "| 0 | `ir`, `process` | the graph IR; the host process |",
                         "| 1 | `formats` | file formats; JSON reading |"]
    assert want == expected, "\n".join(want)
    stale = [r.replace("| 1 |", "| 2 |") for r in want]
    assert len(differences(want, stale)) == 2 and differences(want, want) == [], "a changed level went unseen"
    assert differences(want, None), "missing markers went unseen"


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--write"]):
        sys.exit("usage: layer_table.py REPO [--write]")
    self_test()
    repo = sys.argv[1]
    want = table(layer_rows(open(os.path.join(repo, TEST), encoding="utf-8").read()))
    path = os.path.join(repo, PAGE)
    page = open(path, encoding="utf-8").read()
    if sys.argv[2:] == ["--write"]:
        if page_table(page) is None:
            sys.exit("layer_table: %s lacks the markers %s ... %s" % (PAGE, BEGIN, END))
        head, rest = page.split(BEGIN, 1)
        new = head + BEGIN + "\n" + "\n".join(want) + "\n" + END + rest.split(END, 1)[1]
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(new)
        os.replace(path + ".tmp", path)
        return 0
    problems = differences(want, page_table(page))
    if problems:
        print("FAIL: the table of layers in %s differs from kLayerLevel in %s; run\n"
              "  tests/docs/layer_table.py . --write\n%s" % (PAGE, TEST, "\n".join(problems)))
        return 1
    print("PASS: %s's table of layers is kLayerLevel's (%d rows)" % (PAGE, len(want) - len(HEADER)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
