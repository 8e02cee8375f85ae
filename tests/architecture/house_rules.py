#!/usr/bin/env python3
"""The size rules of docs/contributing.md, checked so that they hold instead of drifting:

- no C++ function over 120 lines in src/, tools/, python/src (the body, brace to brace);
- no file in tools/ over 300 lines;
- no source folder (src/, tools/, python/src, models/ and each of their sub-folders) over
  3000 lines, summed over the C++ files directly in it: a folder is one concept, and
  more than that is two concepts (or a concept with parts) that want folders of their own;
- README.md at most 220 lines, and neither it nor docs/ names a commit, an issue or a session.
- README.md at most 220 lines, and neither it nor docs/ names a commit, an issue or a session.

Usage: house_rules.py [REPO]  (default: this file's repository). Exit 1 listing every breach.
"""
import os
import re
import sys

MAX_FUNCTION_LINES = 120
MAX_TOOLS_FILE_LINES = 300
MAX_FOLDER_LINES = 3000
MAX_README_LINES = 220
CPP = (".cpp", ".h", ".cc", ".hpp")


def strip_cpp(text):
    """The text with comments, string and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    blank = lambda s: re.sub(r"[^\n]", " ", s)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j])); i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(blank(text[i:j])); i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            k = text.find("(", i + 2)
            end = ")" + text[i + 2:k] + '"'
            j = text.find(end, k)
            j = n if j < 0 else j + len(end)
            out.append('""' + blank(text[i + 2:j])); i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + blank(text[i + 1:j]) + c); i = j + 1
        else:
            out.append(c); i += 1
    return "".join(out)


# What stands before a function body's "{": a parameter list, perhaps qualifiers or a
# trailing return type (constructors' initialiser lists end in ")" too).
FUNCTION_HEAD = re.compile(r"\)\s*(?:const|noexcept|override|final|mutable|->\s*[\w:<>,\s*&]+|\s)*$")
NOT_A_FUNCTION = re.compile(r"^\s*(?:if|for|while|switch|catch|do)\b")


def long_functions(path):
    """(first line, lines) of every function body longer than the limit."""
    text = strip_cpp(open(path, encoding="utf-8", errors="replace").read())
    found, stack, head_start = [], [], 0
    for i, c in enumerate(text):
        if c == "{":
            head = text[head_start:i]
            inside = any(kind == "function" for kind, _ in stack)
            is_function = not inside and FUNCTION_HEAD.search(head) and not NOT_A_FUNCTION.search(head)
            stack.append(("function" if is_function else "block", i))
            head_start = i + 1
        elif c == "}":
            if stack:
                kind, start = stack.pop()
                if kind == "function":
                    first = text.count("\n", 0, start) + 1
                    lines = text.count("\n", start, i) + 1
                    if lines > MAX_FUNCTION_LINES:
                        found.append((first, lines))
            head_start = i + 1
        elif c == ";":
            head_start = i + 1
    return found


def source_files(repo, roots):
    for root in roots:
        for folder, dirs, files in os.walk(os.path.join(repo, root)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            yield folder, files


def line_count(path):
    return sum(1 for _ in open(path, encoding="utf-8", errors="replace"))


def folder_breaches(repo):
    """A message for every source folder whose C++ files (not its sub-folders') pass the budget."""
    out = []
    for folder, files in source_files(repo, ["src", "tools", os.path.join("python", "src"), "models"]):
        lines = sum(line_count(os.path.join(folder, f)) for f in files if f.endswith(CPP))
        if lines > MAX_FOLDER_LINES:
            out.append(f"{os.path.relpath(folder, repo)}/: {lines} lines of C++ (a folder has at most "
                       f"{MAX_FOLDER_LINES}): split it by concept into sub-folders, as src/backend/cpu/ has "
                       "build/, codegen/, run/ and schedule/, or move the files of another concept to the "
                       "folder of that concept; do not raise the budget to fit")
    return out


def breaches(repo):
    out = []
    for folder, files in source_files(repo, ["src", "tools", os.path.join("python", "src")]):
        for f in files:
            if not f.endswith(CPP):
                continue
            path = os.path.join(folder, f)
            rel = os.path.relpath(path, repo)
            for first, lines in long_functions(path):
                out.append(f"{rel}:{first}: a function of {lines} lines (at most {MAX_FUNCTION_LINES})")
            if rel.startswith("tools" + os.sep):
                n = line_count(path)
                if n > MAX_TOOLS_FILE_LINES:
                    out.append(f"{rel}: {n} lines (a file in tools/ has at most {MAX_TOOLS_FILE_LINES})")
    out += folder_breaches(repo)
    readme = os.path.join(repo, "README.md")
    n = sum(1 for _ in open(readme, encoding="utf-8"))
    if n > MAX_README_LINES:
        out.append(f"README.md: {n} lines (at most {MAX_README_LINES}; guides go to docs/, figures to BENCHMARKS.md)")
    docs = [readme] + [os.path.join(repo, "docs", f) for f in sorted(os.listdir(os.path.join(repo, "docs")))
                       if f.endswith(".md")]
    history = re.compile(r"\b(?:commit [0-9a-f]{7,40}|[0-9a-f]{7,40}\b(?=.*\bcommit)|this session|issue #?\d+)", re.I)
    for path in docs:
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            if history.search(line):
                out.append(f"{os.path.relpath(path, repo)}:{number}: names project history "
                           f"(a commit, an issue or a session): {line.strip()[:100]}")
    return out


def self_check():
    """The scanner finds what it must, and skips what it must not count."""
    import tempfile
    body = "\n".join(f"  x += {i};" for i in range(MAX_FUNCTION_LINES))
    sample = ("namespace a {\nstruct S {\n  int f() const {\n" + body + "\n  }\n};\n"
              'const char* kRaw = R"(\n{ { {\n)";\n'
              "int g(int x) {\n  if (x) {\n    return 1;\n  }\n  return 0;\n}\n}  // namespace a\n")
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write(sample)
    try:
        got = long_functions(f.name)
    finally:
        os.unlink(f.name)
    assert got == [(3, MAX_FUNCTION_LINES + 2)], f"the scanner is off: {got}"
    # The folder budget counts a folder's own C++ files, not its sub-folders' nor other files.
    with tempfile.TemporaryDirectory() as repo:
        def write(rel, lines):
            os.makedirs(os.path.dirname(os.path.join(repo, rel)), exist_ok=True)
            with open(os.path.join(repo, rel), "w") as f:
                f.write("int x;\n" * lines)
        half = MAX_FOLDER_LINES // 2 + 1
        write("src/big/a.cpp", half)
        write("src/big/a.h", half)           # together over the budget
        write("src/big/part/b.cpp", half)    # a sub-folder is a folder of its own
        write("src/small/c.cpp", half)
        write("src/small/notes.txt", MAX_FOLDER_LINES)  # not C++
        got = [b.split(":")[0] for b in folder_breaches(repo)]
    assert got == [os.path.join("src", "big") + "/"], f"the folder budget is off: {got}"


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    self_check()
    found = breaches(repo)
    for b in found:
        print(b)
    print(f"house rules: {len(found)} breach(es)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
