#!/usr/bin/env python3
"""Writes the binary seeds of fuzz/corpus/idx_reader/ and cifar_reader/ (docs/reliability.md).

Each seed is in fuzz/support/two_files.hpp's layout: a flags byte, the first file's length
(2 bytes, big-endian), the first file, the second file. Run it from anywhere; it rewrites the
same bytes each time (gzip with mtime 0).
"""
import gzip
import pathlib
import struct

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
