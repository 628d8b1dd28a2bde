"""The wheels `ladder suite --optimize --ray` needs on a GPU machine that has no Ray and no network.

    python bench/optimize/ray_wheels.py --out .whl [--python 3.12]

Ray's wheel (about 79 MB) is larger than what a device call carries (64 MiB, the working tree
included). A third of it is `ray/jars/`, the Java workers' jar, which a Python driver and Python
tasks never load; the libraries built on Ray (RLlib, Data, Serve, Tune, Train, LLM) and the
dashboard's web client are not loaded by `ray.init` and tasks either. The wheel is rewritten
without them (their RECORD lines go too, so pip installs it cleanly): about 39 MB. Beside
it go the dependencies the GPU image lacks (jsonschema and what it needs); the others Ray asks for
(click, filelock, msgpack, packaging, protobuf, pyyaml, requests) are on that image. On the device:

    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=.:/tmp/site

The version is the one installed here, so the driver and the tests run the same Ray.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
MISSING_ON_THE_IMAGE = ("jsonschema", "jsonschema-specifications", "referencing", "rpds-py")
NOT_LOADED = ("ray/jars/", "ray/rllib/", "ray/data/", "ray/serve/", "ray/tune/", "ray/train/", "ray/llm/",
              "ray/dashboard/client/")
CARRY_LIMIT = 64 * 2**20


def download(names: list[str], python: str, out: Path) -> None:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", python,
               "--implementation", "cp", *[arg for platform in PLATFORMS for arg in ("--platform", platform)],
               "-d", str(out), *names]
    subprocess.run(command, check=True)


def slimmed(wheel: Path) -> Path:
    """The wheel rewritten without what `NOT_LOADED` names (entries and RECORD lines), in its place."""
    slim = wheel.with_suffix(".slim")
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(slim, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            if item.filename.startswith(NOT_LOADED):
                continue
            data = source.read(item)
            if item.filename.endswith(".dist-info/RECORD"):
                data = b"".join(line for line in data.splitlines(keepends=True)
                                if not line.decode().startswith(NOT_LOADED))
            target.writestr(item, data)
    slim.replace(wheel)
    return wheel


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--python", default="3.12", help="the GPU machine's Python")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    version = metadata.version("ray")
    download([f"ray=={version}", *(f"{name}=={metadata.version(name)}" for name in MISSING_ON_THE_IMAGE)],
             args.python, args.out)
    for wheel in args.out.glob("ray-*.whl"):
        slimmed(wheel)
    total = sum(path.stat().st_size for path in args.out.glob("*.whl"))
    print(f"{args.out}: {total / 2**20:.1f} MiB of wheels (a call carries {CARRY_LIMIT / 2**20:.0f} MiB)")
    return 0 if total < CARRY_LIMIT else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
