#!/usr/bin/env bash
# Writes fuzz/corpus/checkpoint_reader/'s seeds in the checkpoint format of the build given:
# the checkpoint of a short virtual-clock run as fuzz/checkpoint_reader.cpp reads it (4 workers,
# k-async K = 2, softmax on a 64-sample 2x2 data set, so that the parameters are 15 floats and
# the seed stays small), whole (checkpoint_virtual.bin) and as its bare payload
# (payload_virtual). Run it after a change of the checkpoint format (docs/reliability.md).
# usage: fuzz/corpus/make_checkpoint_seeds.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
cli=${1:-build}/stalesgd
[ -x "$cli" ] || { echo "make_checkpoint_seeds: no $cli; build first (tools/build.sh)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$tmp/tiny.npz" <<'PY'
import sys
import numpy as np
rng = np.random.default_rng(0)
x = rng.integers(0, 256, size=(64, 2, 2), dtype=np.uint8)
y = rng.integers(0, 3, size=64).astype(np.int64)
np.savez(sys.argv[1], x_train=x, y_train=y, x_test=x[:16], y_test=y[:16], num_classes=np.int64(3))
PY
"$cli" train --dataset "npz:$tmp/tiny.npz" --model softmax --rule k-async --k 2 --workers 4 \
  --delay 'exp:mean=1ms;w1=x2' --clock virtual --iterations 12 --checkpoint-every 2ms \
  --eval-every 1000s --seed 1 --no-progress --out "$tmp/run" >/dev/null
out=fuzz/corpus/checkpoint_reader
cp "$tmp/run/checkpoint.bin" "$out/checkpoint_virtual.bin"
/usr/bin/python3 - "$out" <<'PY'
import pathlib
import struct
import sys
import zlib
out = pathlib.Path(sys.argv[1])
data = (out / "checkpoint_virtual.bin").read_bytes()
magic = b"stalesgd checkpoint\n"
assert data.startswith(magic), "not a checkpoint"
fmt, size = struct.unpack_from("<QQ", data, len(magic))
payload = data[len(magic) + 16:len(magic) + 16 + size]
assert struct.unpack_from("<I", data, len(magic) + 16 + size)[0] == zlib.crc32(payload)
(out / "payload_virtual").write_bytes(payload)
print(f"checkpoint format {fmt}: {len(data)} bytes, payload {size}")
PY
