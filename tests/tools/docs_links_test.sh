#!/usr/bin/env bash
# tools/check_docs_links.py: README.md and docs/ as committed pass (exit 0); in a copy, a link to
# a missing file, a link to a missing heading (on another page and on the same page), a page no
# chain of links from README.md reaches and a CSV under docs/data/ nobody names each fail it,
# named as FILE:LINE; links in code blocks, in inline code and to http(s) are not followed.
# usage: tests/tools/docs_links_test.sh   (from anywhere; stdlib Python only)
set -euo pipefail

no_binary=1
# shellcheck source=script_test_setup.sh
source "$(dirname "$0")/script_test_setup.sh"

# (a) The repository's pages.
"$python" tools/check_docs_links.py >"$tmp/repo.out" ||
  fail "check_docs_links.py on the repository exited $?: $(cat "$tmp/repo.out")"

# A copy to break: the source tree without its builds, runs and fetched data sets (.gitignore's).
copy() {
  rm -rf "$tmp/r" && mkdir "$tmp/r"
  tar -cf - --exclude=./.git --exclude='./build*' --exclude=./runs --exclude='./data/*' \
    --exclude=__pycache__ . | tar -xf - -C "$tmp/r"
  cp data/README.md "$tmp/r/data/"
}
# expect_fail WHAT PATTERN: the copy fails the check with a line matching PATTERN.
expect_fail() {
  local status=0
  "$python" tools/check_docs_links.py --root "$tmp/r" >"$tmp/out" || status=$?
  [ "$status" -eq 1 ] || fail "$1: exited $status, want 1: $(cat "$tmp/out")"
  grep -qE "$2" "$tmp/out" || fail "$1: no line matching '$2' in: $(cat "$tmp/out")"
}

copy
"$python" tools/check_docs_links.py --root "$tmp/r" >"$tmp/out" ||
  fail "the unchanged copy exited $?: $(cat "$tmp/out")"

# (b) A link to a file that is not there.
copy
line=$(($(wc -l <"$tmp/r/docs/cli.md") + 2))
printf '\nSee [the flags](no-such-page.md).\n' >>"$tmp/r/docs/cli.md"
expect_fail "a missing file" "^docs/cli.md:$line: link to no-such-page.md: no file"

# (c) A link to a heading that is not there, on another page and on the same page.
copy
printf '\n[rules](../rules.md#no-such-heading)\n' >>"$tmp/r/docs/paper/finding-6-adasync.md"
expect_fail "a missing heading" "^docs/paper/finding-6-adasync.md:[0-9]+: link to ../rules.md#no-such-heading: no heading"
copy
printf '\n[up](#no-such-heading)\n' >>"$tmp/r/README.md"
expect_fail "a missing heading on the page" "^README.md:[0-9]+: link to #no-such-heading: no heading #no-such-heading in this page"

# (d) A page nobody links to, and one linked only from a page nobody reaches.
copy
printf '# Orphan\n\nSee [cli.md](../cli.md).\n' >"$tmp/r/docs/paper/orphan.md"
expect_fail "an orphan" "^docs/paper/orphan.md:1: orphan: not reachable from README.md \(no page links to it\)"
printf '# Second\n' >"$tmp/r/docs/second.md"
printf '[second](../second.md)\n' >>"$tmp/r/docs/paper/orphan.md"
expect_fail "a page linked only from an orphan" "^docs/second.md:1: orphan: not reachable from README.md \(linked only from docs/paper/orphan.md\)"

# (e) A CSV under docs/data/ that no page and no script names.
# (Its name is made here, so that this script, which the check reads, does not name it.)
copy
csv="nobody-reads-$$.csv"
printf 'a,b\n1,2\n' >"$tmp/r/docs/data/$csv"
expect_fail "an unnamed CSV" "^docs/data/$csv:1: no page and no script names"

# (f) Not links: a fenced block, inline code, an HTML comment, http(s); a heading with code and
# punctuation is found by its GitHub slug.
copy
cat >>"$tmp/r/docs/cli.md" <<'EOF'

```sh
[not a link](missing-in-a-block.md)
```

Inline: `[not a link](missing-inline.md)`. <!-- [hidden](missing-in-a-comment.md) -->
[far away](https://example.com/missing.md), [mail](mailto:nobody@example.com).

## `stalesgd odd`: E[T_sync] / P's heading, again!

[here](#stalesgd-odd-et_sync--ps-heading-again)
EOF
"$python" tools/check_docs_links.py --root "$tmp/r" >"$tmp/out" ||
  fail "code, comments, http(s) links or a GitHub slug were taken wrongly: $(cat "$tmp/out")"

echo "docs_links_test: ok"
