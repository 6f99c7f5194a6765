"""NumPy arrays as a run's data set (train(data=...)), checked as an .npz's arrays are
(src/data/npz.hpp): x of shape (N, D), (N, H, W) or (N, C, H, W), uint8 pixels scaled by 1/255
or finite float32/float64 values; y one integer label per sample, (N,) or (N, 1); 2 to 256
classes (docs/python.md, "NumPy data")."""

from ._errors import Error

KEYS = ("x_train", "y_train", "x_test", "y_test")


def _x(np, name, x):
    if not isinstance(x, np.ndarray):
        raise Error(f"data: {name} is a {type(x).__name__}; give a NumPy array")
    if x.dtype == np.uint8:
        # Times 1/255 in float32, as the .npz reader scales them: an array and its .npz give the
        # same floats to the last bit (x / 255 differs in some).
        x = x.astype(np.float32) * (np.float32(1) / np.float32(255))
    elif x.dtype in (np.float32, np.float64):
        x = x.astype(np.float32, copy=False)
        if not np.isfinite(x).all():
            raise Error(f"data: {name} holds NaN or infinite values; give finite ones")
    else:
        raise Error(f"data: {name} has dtype {x.dtype}; give uint8 pixels (scaled by 1/255) or "
                    "float32/float64 values")
    if x.ndim == 2:
        shape = (1, 1, x.shape[1])
    elif x.ndim == 3:
        shape = (1, x.shape[1], x.shape[2])
    elif x.ndim == 4:
        shape = tuple(x.shape[1:])
    else:
        raise Error(f"data: {name} has shape {x.shape}; give (N, D), (N, H, W) or (N, C, H, W)")
    if x.shape[0] == 0 or min(shape) < 1:
        raise Error(f"data: {name} has shape {x.shape}, without samples or values; give at "
                    "least one sample of at least one value")
    return np.ascontiguousarray(x.reshape(x.shape[0], -1)), shape


def _y(np, name, y, n):
    if not isinstance(y, np.ndarray):
        raise Error(f"data: {name} is a {type(y).__name__}; give a NumPy array")
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.shape[0] != n:
        raise Error(f"data: {name} has shape {y.shape}; give one label per sample of "
                    f"x_{name[2:]}: shape ({n},)")
    if not np.issubdtype(y.dtype, np.integer):
        raise Error(f"data: {name} has dtype {y.dtype}; give integer labels")
    if y.min() < 0 or y.max() > 255:
        raise Error(f"data: {name} holds label {int(y.min() if y.min() < 0 else y.max())}, out "
                    "of range; labels are 0 to 255")
    return np.ascontiguousarray(y.astype(np.uint8))


def arrays_of(data):
    """(x_train, y_train, x_test, y_test, (C, H, W), classes) for the engine."""
    import numpy as np

    if isinstance(data, dict):
        missing = [k for k in KEYS if k not in data]
        if missing:
            raise Error(f"data: no {missing[0]}; give a dict of {', '.join(KEYS)}")
        data = tuple(data[k] for k in KEYS)
    if not isinstance(data, (tuple, list)) or len(data) != 4:
        raise Error("data: give (x_train, y_train, x_test, y_test) or a dict of them")
    x_train, shape = _x(np, "x_train", data[0])
    x_test, test_shape = _x(np, "x_test", data[2])
    if shape != test_shape:
        raise Error(f"data: x_train's samples are {shape} and x_test's {test_shape}; give "
                    "samples of one shape")
    y_train = _y(np, "y_train", data[1], x_train.shape[0])
    y_test = _y(np, "y_test", data[3], x_test.shape[0])
    classes = int(max(y_train.max(), y_test.max())) + 1
    if classes < 2:
        raise Error("data: every label is 0; give at least two classes")
    return (x_train, y_train, x_test, y_test, tuple(int(s) for s in shape), classes)
