"""Fixtures of the Python package's tests (tests/python/, docs/python.md): the CLI binary that
the package's outputs are compared with, and a folder per test. ctest runs them from the
repository root with PYTHONPATH at <build>/python, STALESGD_CLI at the binary and
STALESGD_TEST_PLUGIN_DIR at the plug-ins it built."""

import multiprocessing
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("STALESGD_CLI")
    assert path and os.access(path, os.X_OK), "set STALESGD_CLI to the stalesgd binary (ctest does)"
    return path


@pytest.fixture(scope="session")
def plugins():
    """The folder of the plug-ins the build made from examples/ (libcapped_k_async.so, ...)."""
    path = os.environ.get("STALESGD_TEST_PLUGIN_DIR")
    assert path and os.path.isdir(path), "set STALESGD_TEST_PLUGIN_DIR to <build>/test-plugins " \
        "(ctest does)"
    return Path(path)


@pytest.fixture(scope="session")
def run_cli(cli):
    """Runs `stalesgd ARGS...` from the repository root; (status, stdout, stderr)."""
    def run(*args, check=True):
        p = subprocess.run([cli, *args], cwd=REPO, capture_output=True, text=True)
        if check:
            assert p.returncode == 0, f"stalesgd {' '.join(args)} exited {p.returncode}: {p.stderr}"
        return p.returncode, p.stdout, p.stderr
    return run


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch):
    # data_dir's default, data/, is the repository's (tools/test.sh fetches MNIST there).
    monkeypatch.chdir(REPO)


def in_fresh_interpreter(fn, *args):
    """fn(*args) in an interpreter of its own (fn at a module's top level), its value back here.
    For what lasts the rest of an interpreter's life, as a plug-in does: the other tests in this
    one see the registries the CLI sees."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(fn, args)
