"""The shared harness of the tensorops asv suites.

It lives in ``benchmarks/``, not in ``src/``: asv runs today's benchmarks against
old commits of tensorops, so nothing the harness needs may come and go with the
library's history. It relies only on the public names tensorops has had since its
first commit (``Case``, ``get_variant``, ``VariantUnavailable``, ``UnsupportedCase``).

Layers, in the spirit of ``torch.utils.benchmark``:

- :class:`Controls`, a frozen record of the variables every timing depends on
  (threads, TF32, cudnn.benchmark, seed), applied and restored by :func:`controlled`;
- :class:`Device`, the device specifics (availability, synchronize, memory release,
  out-of-memory) behind one interface, as triton's ``do_bench`` keeps them behind a driver;
- :func:`prepare`, one linear function: resolve the variant, build seeded inputs, warm up;
- :class:`OpBenchmark`, the thin asv base class the suites subclass.

Nothing here initialises CUDA or allocates at import: asv's forkserver imports every
suite in a parent process that later forks, and CUDA cannot survive a fork.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import gc
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.benchmark import Timer

import tensorops

THREADS_ENV = "TENSOROPS_THREADS"
# One thread by default, as torch.utils.benchmark does: timings then compare across
# machines with different core counts, and a shared 2-core CI runner stays quiet.
DEFAULT_THREADS = 1

DEVICES = ["cpu", "cuda"]


# ---------------------------------------------------------------- controls


@dataclass(frozen=True)
class Controls:
    """Every process-wide setting a timing depends on, fixed explicitly.

    TF32 is off: a float32 benchmark measures float32 arithmetic, and a change in
    torch's TF32 default cannot move the history. ``cudnn.benchmark`` is off so the
    convolution algorithm is chosen by fixed heuristics, not by an autotuning race
    whose winner can differ between runs and show up as a false regression.
    """

    threads: int = DEFAULT_THREADS
    allow_tf32: bool = False
    cudnn_benchmark: bool = False
    seed: int = 0


def threads_from_env(environ: Mapping[str, str] = os.environ) -> int:
    raw = environ.get(THREADS_ENV, "").strip()
    if not raw:
        return DEFAULT_THREADS
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{THREADS_ENV} must be a positive integer, got {raw!r}")
    return int(raw)


def controls_from_env(environ: Mapping[str, str] = os.environ) -> Controls:
    return Controls(threads=threads_from_env(environ))


@contextlib.contextmanager
def controlled(controls: Controls) -> Iterator[Controls]:
    """Apply ``controls`` for the duration of the block, then restore what was there."""
    saved = (
        torch.get_num_threads(),
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
        torch.backends.cudnn.benchmark,
    )
    torch.set_num_threads(controls.threads)
    torch.backends.cuda.matmul.allow_tf32 = controls.allow_tf32
    torch.backends.cudnn.allow_tf32 = controls.allow_tf32
    torch.backends.cudnn.benchmark = controls.cudnn_benchmark
    torch.manual_seed(controls.seed)
    try:
        yield controls
    finally:
        torch.set_num_threads(saved[0])
        torch.backends.cuda.matmul.allow_tf32 = saved[1]
        torch.backends.cudnn.allow_tf32 = saved[2]
        torch.backends.cudnn.benchmark = saved[3]


# ---------------------------------------------------------------- devices


class Device:
    """What the harness needs to know about a device, and nothing more."""

    name = ""
    # Where the case's tensors are placed; tests point a fake CUDA device at the CPU.
    tensor_device = ""
    # Whether the device keeps its own clock and allocator statistics: what the device
    # tracks (device time, launch time, sync cost, peak device memory) read.
    has_device_clock = False

    def unavailable_reason(self) -> str | None:
        """None when usable; otherwise why not, for the skip message."""
        raise NotImplementedError

    def synchronize(self) -> None:
        """Block until all work queued on the device is done."""

    def release_memory(self) -> None:
        gc.collect()

    def device_seconds(
        self, call: Callable[[], Any], reps: int, before_each: Callable[[], Any] | None = None
    ) -> list[float]:
        """Seconds of device work in each of ``reps`` calls, by the device's clock;
        ``before_each`` runs before each call, outside the timed interval."""
        raise NotImplementedError(f"{self.name} has no device clock")

    def flush_l2(self) -> None:
        """Evict the device's L2 cache, so that the next call reads its inputs from memory."""
        raise NotImplementedError(f"{self.name} has no device cache to flush")

    def launch_seconds(self, call: Callable[[], Any], reps: int) -> float:
        """Host seconds to issue one call, not waiting for the device to run it."""
        raise NotImplementedError(f"{self.name} has no device queue")

    def sync_seconds(self, reps: int) -> list[float]:
        """Host seconds of each of ``reps`` synchronizes of an idle device."""
        raise NotImplementedError(f"{self.name} has no device queue")

    def peak_memory_bytes(self, call: Callable[[], Any]) -> int:
        """Device memory one call takes at its peak, beyond what was allocated before."""
        raise NotImplementedError(f"{self.name} keeps no allocator statistics")


class CpuDevice(Device):
    name = tensor_device = "cpu"

    def unavailable_reason(self) -> str | None:
        return None


class CudaDevice(Device):
    name = tensor_device = "cuda"

    def unavailable_reason(self) -> str | None:
        # is_available() asks the driver without creating a context.
        if not torch.cuda.is_available():
            return "no CUDA device on this machine (or torch is a CPU build)"
        return None

    has_device_clock = True

    def synchronize(self) -> None:
        torch.cuda.synchronize()

    def release_memory(self) -> None:
        gc.collect()
        if torch.cuda.is_initialized():
            torch.cuda.empty_cache()

    def device_seconds(
        self, call: Callable[[], Any], reps: int, before_each: Callable[[], Any] | None = None
    ) -> list[float]:
        # An event pair around each call and one synchronize after all of them: the host
        # never waits in between, so the stream runs the calls back to back and each
        # pair times one call's kernels, not the launch gaps a per-call sync would add.
        pairs = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(reps)
        ]
        for start, end in pairs:
            if before_each is not None:
                before_each()
            start.record()
            call()
            end.record()
        torch.cuda.synchronize()
        return [start.elapsed_time(end) / 1e3 for start, end in pairs]

    _l2_flush_buffer: torch.Tensor | None = None

    def flush_l2(self) -> None:
        # As triton's do_bench: writing a buffer the size of L2 evicts what the previous
        # call left there. Allocated on first use, once per process.
        if CudaDevice._l2_flush_buffer is None:
            size = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
            CudaDevice._l2_flush_buffer = torch.empty(
                max(size, 1), dtype=torch.int8, device=self.tensor_device
            )
        CudaDevice._l2_flush_buffer.zero_()

    def launch_seconds(self, call: Callable[[], Any], reps: int) -> float:
        torch.cuda.synchronize()
        begun = time.perf_counter()
        for _ in range(reps):
            call()
        issued = time.perf_counter() - begun
        torch.cuda.synchronize()
        return issued / reps

    def sync_seconds(self, reps: int) -> list[float]:
        torch.cuda.synchronize()
        spent = []
        for _ in range(reps):
            begun = time.perf_counter()
            torch.cuda.synchronize()
            spent.append(time.perf_counter() - begun)
        return spent

    def peak_memory_bytes(self, call: Callable[[], Any]) -> int:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        result = call()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        del result
        return peak - before


_DEVICES: dict[str, Device] = {"cpu": CpuDevice(), "cuda": CudaDevice()}


def get_device(name: str) -> Device:
    """The device called ``name``; asv's skip (NotImplementedError) when it is absent."""
    try:
        device = _DEVICES[name]
    except KeyError:
        raise ValueError(f"unknown device {name!r}; expected one of {sorted(_DEVICES)}") from None
    reason = device.unavailable_reason()
    if reason is not None:
        raise NotImplementedError(f"{reason}")
    return device


def is_out_of_memory(error: BaseException) -> bool:
    return isinstance(error, torch.OutOfMemoryError)


# ---------------------------------------------------------------- warm-up


@dataclass(frozen=True)
class WarmUp:
    calls: int
    seconds: float


def warm_up(
    call: Callable[[], Any],
    synchronize: Callable[[], None],
    *,
    min_calls: int = 2,
    max_calls: int = 20,
    max_seconds: float = 2.0,
    settle: float = 0.10,
) -> WarmUp:
    """Run ``call`` until lazy initialisation is paid for, bounded by count and time.

    The first calls on a device pay for context creation, library handles
    (cuBLAS, cuDNN, oneDNN primitives) and allocator growth. Warm-up ends once a call
    is no longer more than ``settle`` faster than the one before, after at least
    ``min_calls`` and at most ``max_calls`` calls or ``max_seconds``.
    """
    start = time.perf_counter()
    previous = float("inf")
    calls = 0
    while calls < max_calls:
        begun = time.perf_counter()
        call()
        synchronize()
        duration = time.perf_counter() - begun
        calls += 1
        settled = duration >= (1.0 - settle) * previous
        if calls >= min_calls and (settled or time.perf_counter() - start >= max_seconds):
            break
        previous = duration
    return WarmUp(calls, time.perf_counter() - start)


# ---------------------------------------------------------------- preparation


@dataclass(frozen=True)
class Prepared:
    """A case ready to time: its zero-argument call, its device and its warm-up record."""

    case: Any
    call: Callable[[], Any]
    device: Device
    warm_up: WarmUp


def _tensorops_api() -> tuple[type, Callable]:
    try:
        return tensorops.Case, tensorops.get_variant
    except AttributeError as missing:
        raise NotImplementedError(
            f"this tensorops commit predates the op/variant API ({missing})"
        ) from None


def prepare(
    op: str,
    variant: str,
    *,
    device: str,
    shape: tuple[int, ...],
    dtype: str = "float32",
    layout: str = "contiguous",
    seed: int = 0,
    backward: bool = False,
) -> Prepared:
    """Resolve ``op``/``variant``, build seeded inputs on ``device`` and warm up.

    With ``backward``, one call is a training step's forward and backward
    (:func:`with_backward`). Every reason the case cannot run here (no such device, a
    variant that does not exist at this commit, a dtype or layout the variant does not
    support, device out of memory) becomes asv's skip, a NotImplementedError saying why.
    """
    target = get_device(device)
    case_type, get_variant = _tensorops_api()
    out_of_memory = False
    try:
        chosen = get_variant(op, variant)
        case = case_type(
            op, shape, dtype=dtype, device=target.tensor_device, layout=layout, seed=seed
        )
        inputs = case.inputs()
        call = with_backward(chosen.bind, inputs, seed) if backward else chosen.bind(inputs)
        warmed = warm_up(call, target.synchronize)
    except LookupError as missing:
        raise NotImplementedError(f"not available at this commit: {missing}") from None
    except NotImplementedError as unsupported:
        raise NotImplementedError(f"unsupported here: {unsupported}") from None
    except Exception as error:
        if not is_out_of_memory(error):
            raise
        out_of_memory = True
    if out_of_memory:
        # Released only now: inside the except block the traceback's frames still hold
        # the tensors that were allocated before the failure.
        target.release_memory()
        raise NotImplementedError(f"out of memory on {device} for {op}/{variant} {shape} {dtype}")
    return Prepared(case, call, target, warmed)


def with_backward(bind: Callable, inputs: tuple, seed: int) -> Callable[[], None]:
    """A training step of the op: its floating-point inputs require grad, each call runs
    the forward and a backward from a fixed seeded gradient, and every input's grad is
    cleared (set to None) before the call, so grads never accumulate across calls."""
    trainable = [t.requires_grad_() for t in inputs if t.is_floating_point()]
    forward = bind(inputs)
    with torch.no_grad():
        output = forward()
    generator = torch.Generator().manual_seed(seed + 1)
    gradient = torch.randn(output.shape, generator=generator).to(output.device, output.dtype)

    def step() -> None:
        for tensor in trainable:
            tensor.grad = None
        forward().backward(gradient)

    return step


@contextlib.contextmanager
def recompiles_fail() -> Iterator[None]:
    """While the block runs, a torch.compile recompile raises instead of happening: the
    timed calls of a compiled variant must run the code its warm-up compiled, and a
    recompile (a guard that fails on the timed inputs) would time the compiler instead."""
    dynamo = sys.modules.get("torch._dynamo")  # only compiled variants import it
    if dynamo is None:
        yield
        return
    saved = dynamo.config.error_on_recompile
    dynamo.config.error_on_recompile = True
    try:
        yield
    finally:
        dynamo.config.error_on_recompile = saved


def cold_compile_seconds(call: Callable[[], Any], device: Device) -> float:
    """Seconds of the first call of a compiled variant after dynamo forgets everything and
    with inductor's FX graph cache off: dynamo's tracing, inductor's lowering and code
    generation, plus one run of the result. The kernels' own builds (C++ on the CPU,
    Triton on CUDA) can still come from inductor's code cache, which a process that
    compiled the variant before (its warm-up) has filled: a fresh machine's first
    compile costs more."""
    import torch._dynamo
    import torch._inductor.config

    torch._dynamo.reset()
    with torch._inductor.config.patch(fx_graph_cache=False):
        device.synchronize()
        begun = time.perf_counter()
        call()
        device.synchronize()
        return time.perf_counter() - begun


def instructions_per_call(
    op: str, variant: str, shape: tuple[int, ...], dtype: str = "float32", number: int = 10
) -> float:
    """CPU instructions one call of a tensorops case executes at one thread: the same
    count for the same binary and inputs whatever else the machine runs, so a 2% change
    shows where wall time's 10% drift hides it.

    The child interpreter builds the case from its description (tensors cannot be
    handed over), seeded as here.
    """
    setup = (
        "import tensorops\n"
        f"case = tensorops.Case({op!r}, {tuple(shape)!r}, dtype={dtype!r}, device='cpu')\n"
        f"call = tensorops.get_variant({op!r}, {variant!r}).bind(case.inputs())\n"
        "call()\n"
    )
    return callgrind_instructions("call()", setup, number)


def callgrind_instructions(stmt: str, setup: str, number: int) -> float:
    """Instructions per run of ``stmt``, counted by valgrind's callgrind through
    ``Timer.collect_callgrind`` at one thread and denoised by torch (CPython's own
    bookkeeping dropped).

    callgrind runs the statement in a child interpreter started as ``python`` from PATH,
    so this one's folder goes first.
    """
    if shutil.which("valgrind") is None:
        raise NotImplementedError("valgrind is not installed; instruction counts need it")
    saved_path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + saved_path
    try:
        stats = Timer(stmt, setup=setup, num_threads=1).collect_callgrind(number=number)
    finally:
        os.environ["PATH"] = saved_path
    return stats.counts(denoise=True) / number


def measure_seconds(call: Callable[[], Any], threads: int, min_run_time: float = 0.2) -> float:
    """Median seconds per call, by torch.utils.benchmark's blocked_autorange.

    Used by ``track_`` benchmarks, which must time themselves. Timer syncs the
    accelerator around each block, so the interval holds the device work.
    """
    timer = Timer(stmt="call()", globals={"call": call}, num_threads=threads)
    return timer.blocked_autorange(min_run_time=min_run_time).median


# ---------------------------------------------------------------- asv base class


class OpBenchmark:
    """Base of the suites: one tensorops op, timed per (device, ..., variant) params.

    A subclass sets ``op``, ``params`` and ``param_names``. Recognised names are
    ``device``, ``dtype``, ``shape``, ``layout`` and ``variant``; a missing dtype
    means float32, a missing layout means contiguous, and a fixed variant can be set
    as the class attribute ``variant``. Params are static and never depend on the
    machine: what this machine cannot run is skipped in ``setup``.

    Timing: asv calls ``timer`` before and after each block of ``number`` calls; it
    synchronizes the device first, so every interval holds the device work it
    launched while the sync costs once per block, not once per call.
    """

    op = ""
    variant = ""
    # asv's default is 60 s per benchmark process; a batch-32 conv takes about 0.4 s a
    # call on one CPU thread here, and slower machines must not turn that into failures.
    timeout = 300.0
    # Seconds of blocked_autorange per throughput track.
    throughput_min_run_time = 0.2
    # True: each call is a forward and backward (harness.with_backward).
    backward = False
    # asv discards results whose version differs from the benchmark's, and by default the
    # version hashes the code, this shared setup included: any harness edit would empty
    # every graph. Bump it in a class when a change alters what its rows measure without
    # changing their params.
    version = "1"

    # asv_runner 0.2.5 re-runs setup before every sample. Keep the last prepared case
    # per process so that repeated setups reuse its inputs and skip the warm-up.
    _cache: dict[tuple, Prepared] = {}

    def setup(self, *params: Any) -> None:
        named = dict(zip(self.param_names, params, strict=True))
        wanted = self.controls_for(named)
        self._controls = contextlib.ExitStack()
        self.controls = self._controls.enter_context(controlled(wanted))
        try:
            self.prepared = self._prepare(named)
            self._controls.enter_context(recompiles_fail())
        except BaseException:
            self._controls.close()
            raise
        self.device = self.prepared.device
        self.call = self.prepared.call

    def controls_for(self, named: dict[str, Any]) -> Controls:
        """The controls this case runs under: the environment's, unless a param sets one."""
        return controls_from_env()

    def _prepare(self, named: dict[str, Any]) -> Prepared:
        spec = dict(
            device=named["device"],
            shape=tuple(named["shape"]),
            dtype=named.get("dtype", "float32"),
            layout=named.get("layout", "contiguous"),
        )
        variant = named.get("variant", self.variant)
        key = (self.op, variant, tuple(sorted(spec.items())), self.controls, self.backward)
        if key not in OpBenchmark._cache:
            OpBenchmark._cache.clear()
            OpBenchmark._cache[key] = prepare(self.op, variant, backward=self.backward, **spec)
        return OpBenchmark._cache[key]

    def teardown(self, *params: Any) -> None:
        # asv calls teardown after a skip too, when setup raised before setting anything up.
        controls = getattr(self, "_controls", None)
        if controls is not None:
            controls.close()

    def timer(self) -> float:
        self.device.synchronize()
        return time.perf_counter()

    def measure_gflops(self) -> float:
        seconds = measure_seconds(
            self.prepared.call, self.controls.threads, self.throughput_min_run_time
        )
        return self.prepared.case.flops / seconds / 1e9

    def measure_gbytes_per_second(self) -> float:
        seconds = measure_seconds(
            self.prepared.call, self.controls.threads, self.throughput_min_run_time
        )
        return self.prepared.case.bytes_moved / seconds / 1e9

    def measure_percent_of_peak_flops(self) -> float:
        """Achieved FLOP/s as a percentage of this machine's measured matmul peak for
        the case's dtype (:func:`peak_matmul_gflops`), for compute-bound ops."""
        peak = peak_matmul_gflops(self.prepared.device, self.prepared.case.dtype, self.controls)
        return 100.0 * self.measure_gflops() / peak

    def measure_percent_of_peak_bandwidth(self) -> float:
        """Achieved bytes/s as a percentage of this machine's measured copy bandwidth
        (:func:`peak_copy_gbps`), for memory-bound ops."""
        peak = peak_copy_gbps(self.prepared.device, self.controls)
        return 100.0 * self.measure_gbytes_per_second() / peak


# ---------------------------------------------------------------- calibration
# What "% of peak" divides by: this machine's own best matmul and copy, measured with
# the same timer, threads and TF32 setting as the op, not a datasheet's figure (which a
# 1-thread CPU run or a clock-limited GPU never reaches). Measured once per process.

CALIBRATION_MATMUL = {"cpu": 1024, "cuda": 8192}  # n of an n x n x n product
CALIBRATION_COPY_BYTES = {"cpu": 64 * 2**20, "cuda": 1024 * 2**20}
CALIBRATION_MIN_RUN_TIME = 0.2
_calibrated: dict[tuple, float] = {}


def peak_matmul_gflops(device: Device, dtype: str, controls: Controls) -> float:
    key = ("matmul", device.name, dtype, controls)
    if key not in _calibrated:
        n = CALIBRATION_MATMUL[device.name]
        product = prepare("matmul", "mm", device=device.name, shape=(n, n, n), dtype=dtype)
        seconds = measure_seconds(product.call, controls.threads, CALIBRATION_MIN_RUN_TIME)
        _calibrated[key] = product.case.flops / seconds / 1e9
    return _calibrated[key]


def peak_copy_gbps(device: Device, controls: Controls) -> float:
    """A device-to-device (or RAM-to-RAM) copy, counting bytes read and written."""
    key = ("copy", device.name, controls)
    if key not in _calibrated:
        size = CALIBRATION_COPY_BYTES[device.name]
        source = torch.empty(size, dtype=torch.uint8, device=device.tensor_device).random_()
        target = torch.empty_like(source)
        warm_up(lambda: target.copy_(source), device.synchronize)
        copy_seconds = measure_seconds(
            lambda: target.copy_(source), controls.threads, CALIBRATION_MIN_RUN_TIME
        )
        _calibrated[key] = 2 * size / copy_seconds / 1e9
    return _calibrated[key]


class TF32Switch:
    """Mixin for float32 matmul and conv: a ``tf32`` param, "off" (every other suite's
    setting) or "on", so the history shows what TF32 tensor cores buy next to the
    float32 figure. TF32 is a CUDA setting; the CPU rows skip."""

    def controls_for(self, named: dict[str, Any]) -> Controls:
        if not get_device(named["device"]).has_device_clock:
            raise NotImplementedError(
                f"TF32 is a CUDA tensor-core mode; {named['device']} has none"
            )
        return dataclasses.replace(controls_from_env(), allow_tf32=named["tf32"] == "on")


class DeviceTracks(OpBenchmark, abc.ABC):
    """Device-side tracks of an op, read from the accelerator itself. A suite subclasses
    it with ``op``, ``params`` and ``param_names`` and nothing else.

    - ``track_device_time``: the median of ``device_reps`` CUDA-event pairs, one around
      each call, all read after one final synchronize. It is the GPU's own time for the
      kernels without the host's launch cost, so for ops well above launch overhead
      (about 1 ms and up) it agrees with the sync-wrapped ``time_*`` of the suites, and
      for small ops it is lower: there ``time_*`` measures launches, this the kernels;
    - ``track_device_time_cold_l2``: the same with L2 flushed before each call (as
      triton's ``do_bench``), so the inputs come from device memory: the figure for an
      op whose inputs were just evicted by other work, next to the warm one above;
    - ``track_launch_time``: host seconds to issue one call without waiting for it;
    - ``track_peak_device_memory``: ``max_memory_allocated`` after
      ``reset_peak_memory_stats``, less what was allocated before the call (inputs left
      out, outputs and intermediates in).

    The CPU has no device clock, so on ``cpu`` setup skips before building any inputs.
    Abstract (``op`` unset) so that asv does not collect this base itself.
    """

    device_reps = 50
    launch_reps = 20

    @property
    @abc.abstractmethod
    def op(self) -> str:
        """The tensorops op; a subclass sets it as a class attribute."""

    def setup(self, *params: Any) -> None:
        named = dict(zip(self.param_names, params, strict=True))
        if not get_device(named["device"]).has_device_clock:
            raise NotImplementedError(
                f"device tracks read an accelerator's clock and allocator; {named['device']} "
                "has neither (its time_* and peakmem_* rows are the CPU's figures)"
            )
        super().setup(*params)

    def track_device_time(self, *params: Any) -> float:
        return statistics.median(self.device.device_seconds(self.call, self.device_reps))

    def track_device_time_cold_l2(self, *params: Any) -> float:
        spent = self.device.device_seconds(self.call, self.device_reps, self.device.flush_l2)
        return statistics.median(spent)

    def track_launch_time(self, *params: Any) -> float:
        return self.device.launch_seconds(self.call, self.launch_reps)

    def track_peak_device_memory(self, *params: Any) -> float:
        return float(self.device.peak_memory_bytes(self.call))

    track_device_time.unit = track_device_time_cold_l2.unit = track_launch_time.unit = "seconds"
    track_peak_device_memory.unit = "bytes"


def drop_cache() -> None:
    """Forget the prepared case kept between setups and the calibration (tests call this
    between cases)."""
    OpBenchmark._cache.clear()
    _calibrated.clear()
