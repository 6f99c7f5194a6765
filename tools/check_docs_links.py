#!/usr/bin/python3
"""The links of README.md and docs/ hold: every page reachable, every link and anchor there.

usage: tools/check_docs_links.py [--root DIR]

Reads README.md and every Markdown page under docs/ (recursively) of DIR (the repository root by
default) and prints one line per problem, as FILE:LINE: what, then exits 1 if there was any:
  - a relative link (or image) to a file that does not exist;
  - a link to #ANCHOR, on the same page or another page, with no heading of that slug
    (GitHub's rule: the heading's text lowercased, every character but letters, digits, spaces,
    '-' and '_' dropped, spaces turned into '-'; a repeated slug gets -1, -2, ...);
  - a page under docs/ that no chain of links from README.md reaches (an orphan);
  - a CSV under docs/data/ whose name no page and no script (tools/, benchmarks/,
    experiments/, tests/) mentions: numbers nobody quotes or writes. A failure, not a warning:
    a CSV that the docs stopped quoting is deleted, or quoted again.
Links to http(s):, mailto: and the like are not followed; links inside fenced code blocks,
inline code spans and HTML comments are not links and are skipped.
Exit status: 0 when there is no problem, 1 otherwise, 2 on bad usage.
"""

import argparse
import re
import sys
from pathlib import Path
from urllib.parse import unquote

INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
SCRIPT_FOLDERS = ("tools", "benchmarks", "experiments", "tests")


def prose_lines(text, code_spans=False):
    """(line number, line) of the text outside fenced code blocks, with HTML comments and
    (unless code_spans) inline code spans blanked out."""
    out, fence, comment = [], None, False
    for no, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1) == fence:
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        if comment:
            end = line.find("-->")
            if end < 0:
                continue
            line, comment = " " * (end + 3) + line[end + 3:], False
        line = re.sub(r"<!--.*?-->", lambda c: " " * len(c.group(0)), line)
        if "<!--" in line:
            line, comment = line[:line.index("<!--")], True
        if not code_spans:
            line = re.sub(r"(`+)(.+?)\1", lambda c: " " * len(c.group(0)), line)
        out.append((no, line))
    return out


def slug(heading):
    """GitHub's anchor of a heading's text: links and code marks kept as their text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # [text](url) -> text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(text):
    """The anchors a page defines: each heading's slug (repeats numbered) and <a name/id>."""
    seen, out = {}, set()
    for _, line in prose_lines(text, code_spans=True):
        m = HEADING.match(line)
        if m:
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    out.update(HTML_ANCHOR.findall(text))
    return out


def links(text):
    """(line number, target) of every link and image of a page's prose."""
    for no, line in prose_lines(text):
        for m in INLINE.finditer(line):
            yield no, m.group(1)
        m = REFERENCE.match(line)
        if m:
            yield no, m.group(1)


def pages(root):
    found = [root / "README.md"] if (root / "README.md").is_file() else []
    return found + sorted((root / "docs").rglob("*.md"))


def check(root):
    problems, texts, edges = [], {}, {}
    for page in pages(root):
        texts[page.resolve()] = page.read_text(encoding="utf-8")
    anchor_cache = {}

    def anchors_of(path):
        if path not in anchor_cache:
            anchor_cache[path] = anchors(texts[path] if path in texts
                                         else path.read_text(encoding="utf-8"))
        return anchor_cache[path]

    for page, text in texts.items():
        name = page.relative_to(root.resolve())
        edges[page] = set()
        for no, target in links(text):
            if not target or SCHEME.match(target):
                continue
            path_part, _, anchor = target.partition("#")
            dest = (page.parent / unquote(path_part)).resolve() if path_part else page
            if not dest.exists():
                problems.append(f"{name}:{no}: link to {target}: no file {path_part}")
                continue
            if dest.suffix == ".md" and dest.is_file():
                edges[page].add(dest)
                if anchor and unquote(anchor) not in anchors_of(dest):
                    where = "this page" if dest == page else path_part
                    problems.append(f"{name}:{no}: link to {target}: no heading "
                                    f"#{anchor} in {where}")
    # Orphans: pages under docs/ that no chain of links from README.md reaches.
    readme = (root / "README.md").resolve()
    reached, todo = {readme}, [readme]
    while todo:
        for dest in edges.get(todo.pop(), ()):
            if dest not in reached:
                reached.add(dest)
                todo.append(dest)
    for page in texts:
        if page != readme and page not in reached:
            linkers = sorted(str(p.relative_to(root.resolve())) for p, to in edges.items()
                             if page in to and p != page)
            why = f"linked only from {', '.join(linkers)}" if linkers else "no page links to it"
            problems.append(f"{page.relative_to(root.resolve())}:1: orphan: not reachable "
                            f"from README.md ({why})")
    # CSVs under docs/data/ that no page and no script names.
    data = root / "docs" / "data"
    csvs = sorted(data.glob("*.csv")) if data.is_dir() else []
    if csvs:
        corpus = "\n".join(texts.values())
        for folder in SCRIPT_FOLDERS:
            for f in sorted((root / folder).rglob("*")) if (root / folder).is_dir() else []:
                if f.is_file() and f.suffix not in (".csv", ".png", ".npz", ".pt", ".gz"):
                    try:
                        corpus += "\n" + f.read_text(encoding="utf-8")
                    except (UnicodeDecodeError, OSError):
                        pass
        for csv in csvs:
            if csv.name not in corpus:
                problems.append(f"{csv.relative_to(root)}:1: no page and no script names "
                                f"{csv.name}")
    return problems


def main(argv):
    parser = argparse.ArgumentParser(
        prog="check_docs_links.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="\n".join(l for l in __doc__.splitlines() if not l.startswith("usage:")))
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the repository root (README.md and docs/)")
    args = parser.parse_args(argv)
    if not (args.root / "docs").is_dir():
        print(f"check_docs_links.py: error: no docs/ under {args.root}", file=sys.stderr)
        return 2
    problems = check(args.root)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
