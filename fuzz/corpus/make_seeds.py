#!/usr/bin/env python3
"""Writes the binary seeds of fuzz/corpus/idx_reader/, cifar_reader/ and npz_reader/
(docs/reliability.md).

Each idx and cifar seed is in fuzz/support/two_files.hpp's layout: a flags byte, the first file's
length (2 bytes, big-endian), the first file, the second file. An npz seed is a flags byte, then
the .npz file (fuzz/npz_reader.cpp). Run it from anywhere; it rewrites the same bytes each time
(gzip with mtime 0, zip entries dated 1980-01-01).
"""
import gzip
import io
import pathlib
import struct
import zipfile

HERE = pathlib.Path(__file__).resolve().parent


def two_files(flags, first, second):
    return bytes([flags]) + struct.pack(">H", len(first)) + first + second


def idx_images(count, rows, cols):
    pixels = bytes((i + p) % 256 for i in range(count) for p in range(rows * cols))
    return struct.pack(">IIII", 0x803, count, rows, cols) + pixels


def idx_labels(labels):
    return struct.pack(">II", 0x801, len(labels)) + bytes(labels)


def cifar_records(labels):
    out = b""
    for r, label in enumerate(labels):
        out += bytes([label]) + bytes((r + p) % 256 for p in range(3072))
    return out


def gz(data):
    return gzip.compress(data, compresslevel=9, mtime=0)


def write(folder, name, data):
    path = HERE / folder / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)


# idx_reader flags: bit 0 through memory files (gzip inflated), bit 1 expect 2x3 images.
images, labels = idx_images(3, 2, 3), idx_labels([0, 9, 4])
write("idx_reader", "plain-2x3", two_files(2, images, labels))
write("idx_reader", "plain-any-size", two_files(0, idx_images(2, 1, 4), idx_labels([1, 2])))
write("idx_reader", "mnist-size", two_files(0, idx_images(1, 28, 28), idx_labels([7])))
write("idx_reader", "file-plain", two_files(3, images, labels))
write("idx_reader", "file-gzip", two_files(3, gz(images), gz(labels)))
write("idx_reader", "file-gzip-images", two_files(1, gz(images), labels))

# cifar_reader flags: bit 0 through memory files (gzip inflated).
write("cifar_reader", "one-record", two_files(0, cifar_records([3]), b""))
write("cifar_reader", "two-files", two_files(0, cifar_records([3]), cifar_records([9])))
write("cifar_reader", "file-gzip", two_files(1, gz(cifar_records([0, 5])), b""))
write("cifar_reader", "file-two", two_files(1, cifar_records([1]), gz(cifar_records([2]))))


def npy(descr, shape, data, major=1):
    dims = "".join(f"{d}," if len(shape) == 1 else f"{d}, " for d in shape).rstrip(", ")
    if len(shape) == 1:
        dims += ","
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': ({dims}), }}"
    pre = 10 if major == 1 else 12
    header += " " * ((64 - (pre + len(header) + 1) % 64) % 64) + "\n"
    size = struct.pack("<H" if major == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([major, 0]) + size + header.encode() + data


def npz(arrays, deflate=False, zip64=False):
    out = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(out, "w", compression=method) as z:
        for name, data in arrays.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            # numpy.savez opens every entry with force_zip64=True.
            with z.open(info, "w", force_zip64=zip64) as f:
                f.write(data)
    return out.getvalue()


def i64(values):
    return struct.pack(f"<{len(values)}q", *values)


# npz_reader flags: bit 0 through a memory file, bit 1 also NpzInfo (headers and labels).
small = {
    "x_train": npy("|u1", (4, 2, 3), bytes(range(0, 240, 10))),
    "y_train": npy("<i8", (4,), i64([0, 1, 2, 1])),
    "x_test": npy("|u1", (2, 2, 3), bytes(range(200, 212))),
    "y_test": npy("<i8", (2,), i64([2, 0])),
}
write("npz_reader", "stored", bytes([2]) + npz(small))
write("npz_reader", "deflated-zip64", bytes([3]) + npz(small, deflate=True, zip64=True))
floats = {
    "x_train": npy("<f4", (3, 2), struct.pack("<6f", -1, 0.5, 2, 3, 0, 1)),
    "y_train": npy("|u1", (3, 1), bytes([0, 1, 1])),
    "x_test": npy("<f8", (1, 2), struct.pack("<2d", 0.25, -4), major=2),
    "y_test": npy("<u2", (1,), struct.pack("<H", 1), major=3),
    "num_classes": npy("<i4", (), struct.pack("<i", 4)),
}
write("npz_reader", "floats-num-classes", bytes([0]) + npz(floats, deflate=True))
write("npz_reader", "channels-first", bytes([2]) + npz({
    "x_train": npy("|u1", (2, 3, 1, 2), bytes(range(12))),
    "y_train": npy("|i1", (2,), bytes([1, 0])),
    "x_test": npy("|u1", (1, 3, 1, 2), bytes(6)),
    "y_test": npy("<u4", (1,), struct.pack("<I", 1)),
    "pixel_max": npy("|u1", (), bytes([11])),  # uint8 features 0..11, scaled by 1/11
}))
# The keys that keep what would be refused: a channels-last looking x, labels 1..3 without 0.
write("npz_reader", "keys", bytes([3]) + npz({
    "x_train": npy("|u1", (2, 2, 2, 1), bytes(range(0, 16, 2))),
    "y_train": npy("<i8", (2,), i64([1, 3])),
    "x_test": npy("|u1", (1, 2, 2, 1), bytes([16, 0, 8, 4])),
    "y_test": npy("<i8", (1,), i64([2])),
    "num_classes": npy("<i8", (), i64([4])),
    "pixel_max": npy("<i8", (), i64([16])),
    "channels_first": npy("<i8", (), i64([1])),
}, deflate=True))
