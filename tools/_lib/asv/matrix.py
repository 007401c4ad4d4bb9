"""The torch releases of asv's matrix: each its own asv environment, named as asv names it
(``-E``, and the suffix of its result files), built where asv builds it. The first release
listed is the default: the nightly's, the gate's, the bisect's and the triage's history;
the releases run measures the others (docs/explanation/continuous.md, "Releases").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tools._lib.base.cli import BadInput, ExternalFailure


@dataclass(frozen=True)
class Release:
    """One torch release of the matrix and its asv environment."""

    torch: str  # the exact pin, "2.13.0"
    env_name: str  # asv's name for the environment
    env_dir: Path  # where asv builds it

    @property
    def python(self) -> Path:
        return self.env_dir / "bin" / "python"

    @property
    def built(self) -> bool:
        return self.python.exists()

    @property
    def graph_part(self) -> str:
        """The folder of the published graphs that holds this release's series."""
        from asv.util import sanitize_filename

        return sanitize_filename(f"torch-{self.torch}")


def releases(repo: Path) -> list[Release]:
    """The matrix's releases, in the order asv.conf.json lists them."""
    from asv import environment
    from asv.config import Config

    conf = Config.load(str(repo / "asv.conf.json"))
    # asv places an environment relative to the working directory it runs in: the repo.
    conf.env_dir = str(repo / conf.env_dir)
    by_torch = {}
    for env in environment.get_environments(conf, None, verbose=False):
        version = env.requirements.get("torch")
        if version:
            # _path is where asv builds it: its name hashes the requirements asv had before
            # it set aside its own (asv_runner), which no public attribute keeps.
            by_torch[version] = Release(version, env.name, Path(env._path))
    pinned = conf.matrix.get("req", conf.matrix).get("torch", [])
    listed = [by_torch[version] for version in pinned if version in by_torch]
    if not listed:
        raise BadInput(f"{repo / 'asv.conf.json'}: the matrix pins no torch release")
    return listed


def default_release(repo: Path) -> Release:
    return releases(repo)[0]


def named_release(repo: Path, torch: str) -> Release:
    """The matrix's release ``torch``; bad input for one the matrix does not pin."""
    found = {release.torch: release for release in releases(repo)}
    if torch not in found:
        raise BadInput(
            f"torch {torch} is not a release of asv.conf.json's matrix "
            f"({', '.join(found)}); add it there to measure it"
        )
    return found[torch]


def chosen_releases(repo: Path, spec: str) -> list[Release]:
    """The releases a ``--releases`` option names: ``default``, ``others`` (every release
    but the default), ``all``, or versions separated by commas."""
    listed = releases(repo)
    if spec == "default":
        return listed[:1]
    if spec == "others":
        if len(listed) < 2:
            raise BadInput("--releases others: the matrix pins one torch release only")
        return listed[1:]
    if spec == "all":
        return listed
    chosen = [named_release(repo, version.strip()) for version in spec.split(",") if version]
    if not chosen:
        raise BadInput(f"--releases {spec!r}: name default, others, all or versions")
    return list(dict.fromkeys(chosen))


def default_python(repo: Path) -> Path:
    """The interpreter of the default release's asv environment (the nightly's)."""
    release = default_release(repo)
    if not release.built:
        raise ExternalFailure(
            f"no asv environment of torch {release.torch} in {release.env_dir} (run asv first)"
        )
    return release.python
