"""How asv puts a commit's library into a benchmark environment: a path file in the
environment's site-packages naming the ``src`` folder of the tree asv checked out for the
commit, where a wheel would have been built and installed.

tensorops is pure Python, so its source is what a wheel installs (the alternation's
workers run each commit's source the same way: tools/_lib/measure/workers.py). pip's
uninstall, wheel build and install are three processes of a second or two each, on every
commit asv benchmarks; a path file is written in milliseconds
(docs/explanation/measurement.md, "Installing a commit"). asv runs this with the
environment's interpreter, so it uses the standard library alone, and from the
configuration's folder (``{conf_dir}``, where the tools run asv), so every commit, older
ones included, is installed by the same code.

    python tools/_lib/asv/source_install.py install BUILD_DIR    (install_command)
    python tools/_lib/asv/source_install.py uninstall            (uninstall_command)

Exit status 0 when done; 2 with one line on stderr when it cannot be (BUILD_DIR holds no
library, site-packages cannot be written, pip fails to remove an earlier copy): asv then
reports the commit as not installed, and no result already measured is touched.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import sysconfig
from pathlib import Path

PROJECT = "tensorops"
PATH_FILE = f"{PROJECT}-source.pth"


def site_packages() -> Path:
    return Path(sysconfig.get_path("purelib"))


def install(build_dir: Path) -> str | None:
    """Point the environment at ``build_dir``'s library (asv has checked out the commit
    there, and keeps it there while it benchmarks the commit); why not, if it cannot."""
    source = build_dir.resolve() / "src"
    if not (source / PROJECT / "__init__.py").is_file():
        return f"source_install: no {PROJECT} package under {source}"
    (site_packages() / PATH_FILE).write_text(f"{source}\n")
    return None


def uninstall() -> str | None:
    """Remove the path file, and a copy pip installed (an environment set up before the
    library was installed from its source): left in site-packages, it would come first.
    Why not, if pip could not."""
    (site_packages() / PATH_FILE).unlink(missing_ok=True)
    installed = importlib.metadata.distributions(name=PROJECT, path=[str(site_packages())])
    if next(iter(installed), None) is None:
        return None
    removed = subprocess.run([sys.executable, "-m", "pip", "uninstall", "-y", "-q", PROJECT])
    if removed.returncode != 0:
        return (
            f"source_install: pip could not remove the installed {PROJECT} ({removed.returncode})"
        )
    return None


def main(argv: list[str]) -> int:
    try:
        if argv[:1] == ["install"] and len(argv) == 2:
            why = install(Path(argv[1]))
        elif argv == ["uninstall"]:
            why = uninstall()
        else:
            why = "usage: source_install.py install BUILD_DIR | uninstall"
    except OSError as error:
        why = f"source_install: {error}"
    if why:
        print(why, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
