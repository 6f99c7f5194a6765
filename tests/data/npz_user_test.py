#!/usr/bin/env python3
"""--dataset npz:PATH the way a user meets it: scikit-learn's 8x8 digits saved with numpy.savez as
they come (uint8 0..16), with labels 1..10, and as channels-last (n, 8, 8, 1) images. Each is
refused before training with exit 1 and one line on stderr naming the NumPy fix and the key that
would keep the data as it is; the NumPy line of each message, run as written, gives a file that
trains to a sensible test error. The keys train too: pixel_max=16 exactly as the fixed floats;
and a run cut short is not resumed on the file with a key changed.

usage: tests/data/npz_user_test.py path/to/stalesgd   (needs Debian's python3-sklearn)
"""
import io
import json
import pathlib
import subprocess
import sys
import tempfile
import warnings
import zipfile

import numpy
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

# A few seconds on the virtual clock; softmax reaches about 0.03 on the fixed digits.
TRAIN = ["train", "--model", "softmax", "--rule", "async", "--workers", "4",
         "--delay", "exp:mean=1ms", "--clock", "virtual", "--time", "3s", "--lr", "0.1",
         "--no-progress"]
SENSIBLE = 0.08


def fail(message):
    print(f"npz_user_test: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def train(stalesgd, path, out, *extra):
    command = [stalesgd, *TRAIN, "--dataset", f"npz:{path}", "--out", str(out), *extra]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def resume(stalesgd, out):
    return subprocess.run([stalesgd, "train", "--no-progress", "--resume", str(out)],
                          capture_output=True, text=True, check=False)


def savez_arguments(message):
    """The keyword arguments of the message's numpy.savez(PATH, ...) line, without the '...'."""
    start = message.find("numpy.savez(PATH, ")
    if start < 0:
        fail(f"no numpy.savez(PATH, ...) line in: {message}")
    at = start + len("numpy.savez(")
    depth = 1
    while depth:
        depth += {"(": 1, ")": -1}.get(message[at], 0)
        at += 1
    inner = message[start + len("numpy.savez(PATH, "):at - 1]
    return inner.replace("..., ", "").replace(", ...", "")


def refused(stalesgd, path, out, want):
    """Trains on `path`, which must be refused in one stderr line holding every text of `want`;
    returns the line."""
    r = train(stalesgd, path, out)
    lines = r.stderr.splitlines()
    if r.returncode != 1 or len(lines) != 1:
        fail(f"{path.name}: want exit 1 and one stderr line, got {r.returncode} and {r.stderr!r}")
    line = lines[0]
    if not line.startswith(f"stalesgd: error: {path}: "):
        fail(f"{path.name}: the line does not name the file: {line}")
    for text in want:
        if text not in line:
            fail(f"{path.name}: '{text}' is not in: {line}")
    if (out / "summary.json").exists():
        fail(f"{path.name}: a refused file left {out}/summary.json")
    return line


def trained(stalesgd, path, out, model):
    r = train(stalesgd, path, out)
    if r.returncode != 0:
        fail(f"{path.name} does not train: {r.stderr.strip()}")
    if f"{model} on npz:{path}" not in r.stdout:
        fail(f"{path.name}: the run is not {model}: {r.stdout}")
    error = json.loads((out / "summary.json").read_text())["final_test_error"]
    last = (out / "evals.csv").read_text().splitlines()[-1]
    return error, last


def main():
    stalesgd = sys.argv[1]
    digits = load_digits()  # bundled with scikit-learn: no download
    x_train, x_test, y_train, y_test = train_test_split(
        digits.images.astype("uint8"), digits.target, test_size=0.2, random_state=0)
    assert x_train.max() == 16 and y_train.min() == 0
    as_is = {"x_train": x_train, "y_train": y_train, "x_test": x_test, "y_test": y_test}
    plus_one = {**as_is, "y_train": y_train + 1, "y_test": y_test + 1}
    last = {**as_is, "x_train": x_train.reshape(-1, 8, 8, 1),
            "x_test": x_test.reshape(-1, 8, 8, 1)}
    dark = ["uint8 with maximum 16", "scales uint8 by 1/255", "(x_train / 16).astype('float32')",
            "pixel_max=16"]
    cases = [
        # name, arrays, what each refusal in turn must say (the NumPy line of each applied).
        ("digits", as_is, [dark]),
        ("labels", plus_one,
         [["the smallest label is 1", "class 0 would be empty", "y_train=y_train - 1",
           "num_classes=11"], dark]),
        ("channels-last", last,
         [["shape (1437, 8, 8, 1)", "8 channels of 8x1", "x_train.transpose(0, 3, 1, 2)",
           "channels_first=1"], dark]),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        errors = {}
        for name, arrays, refusals in cases:
            arrays = dict(arrays)
            path = tmp / f"{name}.npz"
            for n, want in enumerate(refusals):
                numpy.savez(path, **arrays)
                line = refused(stalesgd, path, tmp / f"{name}-{n}", want)
                # The user's next step: the message's NumPy line, as written.
                arrays.update(eval(f"dict({savez_arguments(line)})", {"numpy": numpy}, arrays))
            numpy.savez(path, **arrays)
            errors[name], _ = trained(stalesgd, path, tmp / f"{name}-fixed", "softmax(64-10)")
            if not errors[name] < SENSIBLE:
                fail(f"{name}, fixed: test error {errors[name]}, want under {SENSIBLE}")

        # Or the data kept as it is, saying so with a key.
        kept = tmp / "kept.npz"
        numpy.savez(kept, **as_is, pixel_max=16)
        error, row = trained(stalesgd, kept, tmp / "kept", "softmax(64-10)")
        _, fixed_row = trained(stalesgd, tmp / "digits.npz", tmp / "digits-again",
                               "softmax(64-10)")
        if row != fixed_row:  # x / 16 either way, exactly
            fail(f"pixel_max=16 trains otherwise than x / 16: {row} against {fixed_row}")
        numpy.savez(kept, **plus_one, pixel_max=16, num_classes=11)
        trained(stalesgd, kept, tmp / "kept-11", "softmax(64-11)")
        numpy.savez(kept, **last, pixel_max=16, channels_first=1)
        r = subprocess.run([stalesgd, "data", "info", "--dataset", f"npz:{kept}"],
                           capture_output=True, text=True, check=False)
        for text in ["image       8x8x1", "layout      x (N, 8, 8, 1): channels first "
                     "(channels_first = 1)", "features    uint8 scaled by 1/16 (pixel_max = 16)"]:
            if r.returncode != 0 or text not in r.stdout:
                fail(f"data info of channels_first=1: no '{text}' in {r.stdout}{r.stderr}")
        # A key is part of the data set's digest: a run cut short (as kill -9 after its last
        # checkpoint leaves it) is not resumed on the file with pixel_max changed.
        numpy.savez(kept, **as_is, pixel_max=16)
        cut = tmp / "cut"
        if train(stalesgd, kept, cut, "--checkpoint-every", "0.5s").returncode != 0:
            fail("the run with checkpoints failed")
        (cut / "summary.json").unlink()
        (cut / "workers.csv").unlink()
        numpy.savez(kept, **as_is, pixel_max=17)
        r = resume(stalesgd, cut)
        if r.returncode != 1 or len(r.stderr.splitlines()) != 1 or \
                f"the arrays of {kept} are not the ones this run started on" not in r.stderr:
            fail(f"resumed with pixel_max changed: exit {r.returncode}, {r.stderr!r}")
        numpy.savez(kept, **as_is, pixel_max=16)
        r = resume(stalesgd, cut)
        if r.returncode != 0:
            fail(f"not resumed on its own file: {r.stderr.strip()}")

        # An array replaced by appending to the archive (zipfile warns "Duplicate name" and
        # writes it): numpy.load returns the appended one, so reading the first would train on
        # data the user replaced. Refused, naming both entries.
        numpy.savez(kept, **as_is, pixel_max=16)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with zipfile.ZipFile(kept, "a") as z:
                buffer = io.BytesIO()
                numpy.save(buffer, x_train[::-1])
                z.writestr("x_train.npy", buffer.getvalue())
        assert (numpy.load(kept)["x_train"] == x_train[::-1]).all()
        refused(stalesgd, kept, tmp / "twice",
                ["two members named x_train.npy (entries 1 and 6)", "numpy.savez, once each"])

        # What the check keeps a user from: the digits scaled by 1/255 (pixel_max=255 says so).
        numpy.savez(kept, **as_is, pixel_max=255)
        dim, _ = trained(stalesgd, kept, tmp / "dim", "softmax(64-10)")
        if not dim > 2 * error:
            fail(f"1/255 gave test error {dim}, not worse than 1/16's {error}")
    print(f"npz_user_test: ok (test error {errors['digits']:.4f} fixed, {dim:.4f} at 1/255; "
          f"labels {errors['labels']:.4f}, channels-last {errors['channels-last']:.4f})")


if __name__ == "__main__":
    main()
