"""Builds the extension module stalesgd._core with the project's CMake for `pip install .`
(pyproject.toml; docs/python.md, "Installing"). The build tree is build-pip/ beside this file,
or STALESGD_BUILD_DIR, a tree the project's CMake configured already (build/ of tools/build.sh:
pip then builds what is not yet built there, and configures nothing); STALESGD_CMAKE_ARGS adds
configure arguments (e.g. -DSTALESGD_NATIVE=ON, which tools/build.sh
uses: Eigen is several times faster with it), CMAKE_BUILD_PARALLEL_LEVEL the jobs (default 2)."""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        given = os.environ.get("STALESGD_BUILD_DIR") or None
        build = Path(given).resolve() if given else ROOT / "build-pip" / "cmake"
        if given and not (build / "CMakeCache.txt").is_file():
            sys.exit(f"setup.py: STALESGD_BUILD_DIR={given} is not a configured CMake build tree")
        configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     "-DSTALESGD_PYTHON=ON", "-DSTALESGD_BUILD_TESTS=OFF",
                     "-DSTALESGD_BUILD_BENCHMARKS=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        if shutil.which("ccache"):
            configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
            # Paths hashed relative to this checkout, as tools/build.sh does, so that another
            # checkout's (or build/'s) objects are hits; a base elsewhere would miss them all.
            os.environ["CCACHE_BASEDIR"] = str(ROOT)
            os.environ.setdefault("CCACHE_SLOPPINESS", "pch_defines,time_macros,include_file_mtime")
        configure += shlex.split(os.environ.get("STALESGD_CMAKE_ARGS", ""))
        if not given:
            subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.run(["cmake", "--build", str(build), "--target", "stalesgd_python", "-j",
                        jobs], check=True)
        built = build / "python" / "stalesgd"
        module = next(built.glob("_core*.so"), None)
        if module is None:
            sys.exit(f"setup.py: CMake built no {built}/_core*.so: is pybind11 installed "
                     "(Debian's pybind11-dev, tools/setup.sh python)?")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(module, target)
        # --model torchscript:PATH's plugin, when the build has LibTorch (stalesgd/__init__.py).
        plugin = built / "libstalesgd_torchscript.so"
        if plugin.is_file():
            shutil.copyfile(plugin, target.parent / plugin.name)


setup(ext_modules=[CMakeExtension("stalesgd._core")], cmdclass={"build_ext": CMakeBuild},
      # Everything setuptools writes goes under build-pip/ too, none of it beside the sources.
      options={"build": {"build_base": str(ROOT / "build-pip" / "setuptools")},
               "egg_info": {"egg_base": str(ROOT / "build-pip")}})
