"""Progress of a run started from Python: a tqdm bar when tqdm is installed (a notebook's or a
terminal's), else one line on stderr rewritten in place (docs/python.md, "Progress")."""

import sys


class Progress:
    """Called with the engine's progress samples (a dict) by the interpreter's thread."""

    def __init__(self, label=""):
        self.label = label
        self.bar = None
        self.last = 0
        try:
            from tqdm.auto import tqdm
            # Per mille of the budget; no rate, which would be per mille per second.
            self.bar = tqdm(total=1000, desc=label or "stalesgd", leave=True,
                            bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}"
                                       "{postfix}")
        except ImportError:
            pass

    def __call__(self, sample):
        error = sample.get("test_error")
        shown = f"it {sample['iteration']}  t {sample['t']:.2f}s" + (
            f"  test error {error:.4f}" if error is not None else "")
        budget = sample.get("budget")
        if self.bar is not None:
            if budget is not None:
                done = min(1000, int(budget * 1000))
                self.bar.update(done - self.last)
                self.last = done
            self.bar.set_postfix_str(shown)
            return
        percent = f"{100 * budget:5.1f}%  " if budget is not None else ""
        sys.stderr.write(f"\r{self.label}{percent}{shown}   ")
        sys.stderr.flush()

    def close(self, complete=False):
        """complete: the run reached its budget, which the last sample (at most ten a second)
        may not show."""
        if self.bar is not None:
            if complete:
                self.bar.update(1000 - self.last)
            self.bar.close()
        else:
            sys.stderr.write("\n")
            sys.stderr.flush()
