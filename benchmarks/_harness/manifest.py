"""What an asv environment's benchmarks run under, one ``name: value`` line each: the
interpreter, torch and how it was built (compiler, MKL, oneDNN, the CPU instructions it
picked here), CUDA, the GPUs, and the harness's controls beside torch's defaults. The
nightly records it per environment (its manifest), and the releases table heads its
columns with it: a build difference explains part of a difference between releases.

    python -m benchmarks._harness.manifest      (an asv environment's interpreter)
"""

from __future__ import annotations

import dataclasses
import os
import platform
import re

import torch

from .controls import controls_from_env

# The lines of torch.__config__.show() that name what torch was built with.
BUILD_LINES = {
    "compiler": r"^\s*- (GCC|clang|MSVC) .*",
    "mkl": r"^\s*- Intel\(R\) oneAPI Math Kernel Library Version (\S+)",
    "onednn": r"^\s*- Intel\(R\) MKL-DNN (v\S+)",
    "openmp": r"^\s*- OpenMP (\d+)",
}


def build_facts() -> dict[str, str | None]:
    shown = torch.__config__.show()
    facts = {}
    for name, pattern in BUILD_LINES.items():
        found = re.search(pattern, shown, re.M)
        facts[f"build {name}"] = (
            (found.group(0).strip("- ").strip() if name == "compiler" else found.group(1))
            if found
            else None
        )
    return facts


def facts() -> dict[str, object]:
    controls = dataclasses.asdict(controls_from_env())
    cuda = torch.cuda.is_available()
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        **build_facts(),
        "cpu capability": torch.backends.cpu.get_cpu_capability(),
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if cuda else None,
        "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
        "threads (harness)": controls["threads"],
        "tf32 (harness)": controls["allow_tf32"],
        "cudnn.benchmark (harness)": controls["cudnn_benchmark"],
        "tf32 matmul (torch default)": torch.backends.cuda.matmul.allow_tf32,
        "tf32 cudnn (torch default)": torch.backends.cudnn.allow_tf32,
    }


def main() -> None:
    for key, value in facts().items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
