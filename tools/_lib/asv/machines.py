"""asv machines: this machine described under a stable name, so every run's results line up
in one history."""

from __future__ import annotations

import platform
import shutil
import subprocess

from tools._lib.base.cli import BadInput


def register_machine(name: str) -> None:
    """Describe this machine to asv under ``name``.

    Written with asv's own API because ``asv machine --machine NAME --yes`` saves only the
    fields that differ from its defaults, leaving the CPU, core count and architecture
    out of the results. Two fields are made stable: asv keys each graph by them, and the
    kernel version in its default ``os`` and the exact byte count in ``ram`` change
    between CI runner images of the same kind, which would split one machine's history
    into many graphs (the nightly's manifest records the kernel).
    """
    from asv.machine import MachineCollection
    from asv.util import UserError

    try:
        MachineCollection.save(name, describe_machine(name))
    except (UserError, ValueError) as error:  # a corrupt ~/.asv-machine.json
        raise BadInput(
            f"cannot record machine {name!r} in asv's machine file: {error} "
            "(fix or remove ~/.asv-machine.json)"
        ) from None


def describe_machine(name: str) -> dict[str, str]:
    """This machine as asv describes it, with the stable keys (see register_machine)."""
    from asv.machine import Machine

    described = {**Machine.get_defaults(), "machine": name}
    described["os"] = platform.system()
    described["ram"] = f"{round(int(described['ram']) / 2**30)}GB"
    return described


def this_host() -> str:
    """The CPU model this process runs on, as asv names it: which host's floors apply."""
    from asv.machine import Machine

    return str(Machine.get_defaults().get("cpu") or "unknown")


def last_level_cache() -> str:
    """lscpu's L3 line ("32 MiB (1 instance)"), the figure beside the CPU model that says
    which host a timing came from; "unknown" where lscpu is missing or names none."""
    if shutil.which("lscpu") is None:
        return "unknown"
    shown = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    for line in shown.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "L3 cache" or name.strip() == "L3":
            return value.strip()
    return "unknown"
