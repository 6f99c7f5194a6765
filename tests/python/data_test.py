"""NumPy arrays as the data set: trained without an .npz, and refused in one line each when
their dtype, shape or labels are wrong (docs/python.md, "NumPy data")."""

import numpy as np
import pytest

import stalesgd

OPTIONS = {"model": "softmax", "rule": "sync", "workers": 2, "clock": "virtual",
           "delay": "const:1ms", "iterations": 200, "eval_every": "0.05s", "lr": 0.5,
           "batch": 16}


def blobs(n, seed):
    """Three well-separated Gaussian classes in 8 dimensions."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    centres = np.eye(3, 8, dtype=np.float32) * 3
    return (centres[y] + rng.normal(0, 0.5, (n, 8))).astype(np.float32), y


def test_numpy_arrays_train():
    x, y = blobs(600, 1)
    xt, yt = blobs(200, 2)
    result = stalesgd.train(OPTIONS, data=(x, y, xt, yt), progress=False)
    assert result.stop_reason == "iterations"
    assert result.evals["test_error"].iloc[0] > 0.3
    assert result.evals["test_error"].iloc[-1] < 0.05
    assert result.summary["config"]["dataset"] == "npz:(numpy arrays)"
    # A dict, uint8 images of (N, H, W), and (N, 1) labels.
    images = (np.clip(x[:, :4], 0, 1) * 255).astype(np.uint8).reshape(-1, 2, 2)
    timages = (np.clip(xt[:, :4], 0, 1) * 255).astype(np.uint8).reshape(-1, 2, 2)
    r = stalesgd.train(OPTIONS, data={"x_train": images, "y_train": y[:, None],
                                      "x_test": timages, "y_test": yt}, progress=False)
    assert len(r.evals) > 1


def test_numpy_arrays_train_as_their_npz(tmp_path, run_cli):
    # uint8 images scaled as the .npz reader scales them: the same run, row for row.
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, size=(400, 3, 3), dtype=np.uint8)
    y = (x.reshape(400, -1).astype(int).sum(axis=1) > 9 * 127).astype(np.int64)
    arrays = (x[:300], y[:300], x[300:], y[300:])
    np.savez(tmp_path / "d.npz", x_train=arrays[0], y_train=arrays[1], x_test=arrays[2],
             y_test=arrays[3])
    stalesgd.train(OPTIONS, data=arrays, out=tmp_path / "py", progress=False)
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in OPTIONS.items()]
    run_cli("train", *flags, "--dataset", f"npz:{tmp_path / 'd.npz'}", "--out",
            str(tmp_path / "cli"), "--no-progress")
    for name in ("updates.csv", "evals.csv"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()


@pytest.mark.parametrize("change,message", [
    (lambda d: (d[0].astype(np.int32),) + d[1:], r"^data: x_train has dtype int32; give uint8"),
    (lambda d: (d[0].reshape(-1, 2, 2, 2, 1),) + d[1:], r"^data: x_train has shape \(600, 2, 2, 2, 1\)"),
    (lambda d: (d[0], d[1][:10]) + d[2:], r"^data: y_train has shape \(10,\); give one label per sample"),
    (lambda d: d[:3] + (d[3] - 5,), r"^data: y_test holds label -5, out of range"),
    (lambda d: d[:3] + (d[3].astype(np.float32),), r"^data: y_test has dtype float32; give integer"),
    (lambda d: (d[0], d[1], d[2][:, :4], d[3]), r"^data: x_train's samples are \(1, 1, 8\) and x_test's \(1, 1, 4\)"),
    (lambda d: (np.where(d[0] > 1, np.nan, d[0]),) + d[1:], r"^data: x_train holds NaN"),
    (lambda d: d[:3], r"^data: give \(x_train, y_train, x_test, y_test\)"),
    (lambda d: (list(d[0]),) + d[1:], r"^data: x_train is a list; give a NumPy array"),
])
def test_bad_arrays_raise_one_line(change, message):
    x, y = blobs(600, 1)
    xt, yt = blobs(200, 2)
    with pytest.raises(stalesgd.Error, match=message) as e:
        stalesgd.train(OPTIONS, data=change((x, y, xt, yt)), progress=False)
    assert "\n" not in str(e.value)


def test_data_and_dataset_exclude_each_other():
    x, y = blobs(60, 1)
    with pytest.raises(stalesgd.Error, match="data= and dataset= exclude each other"):
        stalesgd.train(OPTIONS, dataset="mnist", data=(x, y, x, y))
