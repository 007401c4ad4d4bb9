"""The integration lane: everything here builds asv environments, runs asv, valgrind or a
browser, or runs every benchmark row at its full size, so it is marked ``slow`` (the fast
lane, ``-m "not slow"``, is tests/unit)."""

import pytest

from tests.support import planted

# Modules that share one session fixture keep to one worker, which builds it once: the gate
# with bisect and the triage work on the one planted history.
SHARED_GROUPS = {"test_pr_gate_bisect": "planted_history", "test_triage": "planted_history"}


# Before xdist's own hook, which names each test by its group (``nodeid@group``) only if
# the mark is already there: where the modules are named on the command line, this file
# is loaded before xdist's worker plugin, and without tryfirst its hook ran after it, so
# every test of a module went to either core and both built the module's fixtures.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.slow)
            # Run on two cores (--dist loadgroup), a module keeps to one worker, so its
            # fixtures build their histories once; every row is a test of its own.
            if item.path.name != "test_every_row.py":
                group = SHARED_GROUPS.get(item.path.stem, item.path.stem)
                item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session")
def planted_history(tmp_path_factory, shared_asv_env) -> planted.PlantedHistory:
    """The history the gate, bisect and triage tests share (tests/support/planted.py)."""
    return planted.build(tmp_path_factory.mktemp("planted"), shared_asv_env)
