"""The asv base class of the suites, and the TF32 switch."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from typing import Any

from .controls import Controls, controlled, controls_from_env
from .devices import get_device, require_accelerator
from .measure import recompiles_fail
from .prepare import SEED, Prepared, looked_up, prepare_once

# A call of this many seconds or more is sampled at most LONG_CALL_SAMPLES times a round,
# with no asv warm-up call of its own: the harness's warm-up has run it until quiet, and
# the spread of such a row's samples is a small fraction of the floors its graphs are
# judged at, which come from one process against another, not from more samples in one
# (docs/explanation/measurement.md, "Long calls").
LONG_CALL_SECONDS = 0.2
LONG_CALL_SAMPLES = 2
# asv's own bound on a round's sampling at two rounds: no further sample once it is passed.
ROUND_SECONDS = 10.0


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
    # True: each call is a forward and backward (prepare.with_backward).
    backward = False
    # True for an op that reads its inputs at data-dependent addresses (a gather, a
    # scatter, a lookup): its calls take copies of the inputs in turn, so each reads them
    # from memory, not partly from a last-level cache it shares with its neighbours
    # (cold.py).
    cold_inputs = False
    # False for a class whose CPU rows skip by design (accelerator-only): no count twins.
    cpu_rows = True
    # asv discards results whose version differs from the benchmark's, and by default the
    # version hashes the code, this shared setup included: any harness edit would empty
    # every graph. Bump it in a class when a change alters what its rows measure without
    # changing their params.
    version = "1"

    def setup(self, *params: Any) -> None:
        named = self._enter_controls(params)
        try:
            self.prepared = self._prepare(named)
            self._controls.enter_context(recompiles_fail())
        except BaseException:
            self._controls.close()
            raise
        self.case = self.prepared.case
        self.device = self.prepared.device
        self.call = self.prepared.call
        if self.prepared.call_seconds >= LONG_CALL_SECONDS:
            self.sample_long_call()

    def sample_long_call(self) -> None:
        """asv's sampling of this row's process set for a long call (asv_runner reads these
        attributes again after ``setup``; an ``--attribute`` given to asv still wins): one
        call a sample, no untimed calls, at most LONG_CALL_SAMPLES samples and one once a
        round's ROUND_SECONDS are spent."""
        self.number = 1
        self.warmup_time = 0.0
        self.min_run_count = 1
        self.repeat = (1, LONG_CALL_SAMPLES, ROUND_SECONDS)

    def set_up_case(self, *params: Any) -> None:
        """``setup`` short of the call: the controls, the device and the case, no inputs
        and no warm-up, for a row that reads what another row of this class measured
        (derived.py)."""
        named = self._enter_controls(params)
        try:
            op, variant, spec = self.resolve(named)
            self.device = get_device(spec["device"])
            _, self.case = looked_up(
                op, variant, spec["shape"], spec["dtype"], self.device, spec["layout"], SEED
            )
        except BaseException:
            self._controls.close()
            raise

    def _enter_controls(self, params: tuple) -> dict[str, Any]:
        named = dict(zip(self.param_names, params, strict=True))
        self._controls = contextlib.ExitStack()
        self.controls = self._controls.enter_context(controlled(self.controls_for(named)))
        return named

    def controls_for(self, named: dict[str, Any]) -> Controls:
        """The controls this case runs under: the environment's, unless a param sets one."""
        return controls_from_env()

    def resolve(self, named: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
        """The case a param combination stands for: its op, variant and the rest (device,
        dtype, layout, shape), as ``setup`` prepares it and the count twins count it."""
        spec = {
            "device": named["device"],
            "dtype": named.get("dtype", "float32"),
            "layout": named.get("layout", "contiguous"),
            "shape": tuple(named["shape"]),
        }
        return self.op, named.get("variant", self.variant), spec

    def _prepare(self, named: dict[str, Any]) -> Prepared:
        op, variant, spec = self.resolve(named)
        spec_key = tuple(sorted(spec.items()))
        return prepare_once(op, variant, spec_key, self.controls, self.backward, self.cold_inputs)

    def teardown(self, *params: Any) -> None:
        # asv calls teardown after a skip too, when setup raised before setting anything up.
        controls = getattr(self, "_controls", None)
        if controls is not None:
            controls.close()

    def timer(self) -> float:
        self.device.synchronize()
        return time.perf_counter()


class TF32Switch:
    """Mixin for float32 matmul and conv: a ``tf32`` param, "off" (every other suite's
    setting) or "on", so the history shows what TF32 tensor cores buy next to the
    float32 figure. TF32 is a CUDA setting; the CPU rows skip."""

    cpu_rows = False

    def controls_for(self, named: dict[str, Any]) -> Controls:
        require_accelerator(named["device"], "TF32 is a CUDA tensor-core mode")
        return dataclasses.replace(controls_from_env(), allow_tf32=named["tf32"] == "on")
