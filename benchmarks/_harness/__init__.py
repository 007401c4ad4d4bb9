"""The harness of the tensorops asv suites, one job per module, in the spirit of
``torch.utils.benchmark``'s layers:

- :mod:`.controls`: the controlled variables (threads, TF32, cudnn.benchmark, seed),
  set and restored explicitly, and :mod:`.allocator`, the host allocator (jemalloc,
  preloaded by the tools that start asv; glibc's malloc with fixed settings otherwise),
  settled at import, before any tensor exists;
- :mod:`.devices`: the device interface (availability, sync, memory, last-level cache,
  device clock);
- :mod:`.warmup` and :mod:`.prepare`: one linear function from "op X, variant Y" to a
  warmed-up zero-argument call, every reason it cannot run a skip saying why;
  :mod:`.cold`: the copies of the inputs a random-access op's calls take in turn;
- :mod:`.measure`: Timer-based seconds, cold compile time, the recompile guard;
- :mod:`.callgrind`: instruction counts under valgrind;
- :mod:`.calibration`: this machine's peak matmul and copy, for "% of peak";
  :mod:`.run_folder`: the folder one asv run's processes share;
- :mod:`.base` and :mod:`.tracks`: the asv classes the suites subclass or mix in (the
  tracks, the training step); :mod:`.derived`: the two benchmark types by which a
  throughput track reads the seconds its class's time_ row measured;
- :mod:`.worker`, :mod:`.manifest` and :mod:`.counter`: the programs the tools and
  valgrind run (a benchmark process driven block by block, an environment's facts, the
  counting run).

It lives in ``benchmarks/``, not in the library: asv runs today's benchmarks against old
commits of tensorops, so nothing the harness needs may come and go with the library's
history. The package is private (asv imports it while discovering, and finds no
benchmark in it: its mixins are abstract).
"""

from . import allocator  # first: which malloc, settled before any tensor exists
from .base import OpBenchmark, TF32Switch
from .calibration import forget_calibration
from .derived import register as register_benchmark_types
from .devices import DEVICES, get_device, require_accelerator
from .measure import cold_compile_seconds
from .prepare import prepare_once
from .tracks import BandwidthTracks, DeviceTracks, FlopsTracks, GbpsTrack, TrainingStep

__all__ = [
    "DEVICES",
    "BandwidthTracks",
    "DeviceTracks",
    "FlopsTracks",
    "GbpsTrack",
    "OpBenchmark",
    "TF32Switch",
    "TrainingStep",
    "allocator",
    "cold_compile_seconds",
    "drop_cache",
    "get_device",
    "require_accelerator",
]


register_benchmark_types()  # before asv_runner discovers the suites that import this


def drop_cache() -> None:
    """Forget the prepared case kept between setups and the calibration (tests call this
    between cases)."""
    prepare_once.cache_clear()
    forget_calibration()
