"""docs/python.md's walk-through, run block by block in one namespace, as a reader would paste
it into a notebook: its code cannot drift from the package (docs/python.md)."""

import contextlib
import io
import re

from conftest import REPO


def test_the_walk_through_runs(tmp_path, monkeypatch):
    text = (REPO / "docs" / "python.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    assert len(blocks) >= 5
    # In a folder of its own, with the repository's data/ (where data_dir's default looks).
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").symlink_to(REPO / "data")
    namespace, printed = {}, []
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, "docs/python.md", "exec"), namespace)
        printed.append(out.getvalue())
    assert (tmp_path / "k-sweep.png").stat().st_size > 10000
    table = namespace["table"]
    assert list(table.index) == [1, 2, 4, 8]
    # Larger K waits for more of the 8 workers: fewer, slower iterations.
    assert table["seconds_per_iteration"].is_monotonic_increasing
    # The error bounds' example prints what the doc shows, the block after it, to the digit: K = 2
    # until K = 8's floor pays.
    assert [b["best_k"] for b in namespace["p"]["budgets"]] == [2, 2, 2, 4]
    example = next(i for i, b in enumerate(blocks) if "theory(error=True" in b)
    shown = re.search(re.escape(blocks[example]) + r"```\n\n```\n(.*?)^```", text,
                      flags=re.S | re.M)
    assert shown and printed[example] == shown.group(1)
