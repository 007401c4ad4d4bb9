"""The program callgrind.count_cases runs under valgrind: it imports torch and the harness
once, then forks a child per case (at most JOBS at a time); each child builds its case as a
benchmark builds it, warms it up, counts NUMBER calls and dumps them (callgrind names a
child's dumps by its pid), and writes its outcome file: its pid, or why the case cannot run.
The parent writes the code torch picked for the CPU it runs on (a file named ``cpu``).
Every child starts from the same parent, so a case's count does not depend on which cases
came before it (in one process it would: malloc's heap is left in another state).

    python counter.py ROOT CASES.json OUTCOMES_DIR JOBS SWITCH_LIBRARY_OR_EMPTY
"""

import ctypes
import gc
import json
import os
import sys
import time


def count(case: dict, switch, number: int) -> dict:
    """One case's NUMBER calls counted and dumped; its pid, or why it cannot run."""
    import torch._C as bindings

    from benchmarks._harness.controls import Controls, controlled
    from benchmarks._harness.prepare import prepare

    counted = compile("\n".join(["call()"] * number), "<counted>", "exec")
    begun = time.perf_counter()
    with controlled(Controls(threads=1)):
        try:
            prepared = prepare(
                case["op"],
                case["variant"],
                device="cpu",
                shape=tuple(case["shape"]),
                dtype=case["dtype"],
                layout=case["layout"],
                backward=case["backward"],
                warm_up_calls=3,
            )
        except NotImplementedError as skip:
            return {"skip": str(skip)}
        namespace = {"call": prepared.call}
        gc.collect()
        gc.disable()  # a collection inside the counted calls would land in one count only
        if switch is not None:
            switch.start_instrumentation()
        bindings._valgrind_toggle()
        exec(counted, namespace)
        bindings._valgrind_toggle_and_dump_stats()
    return {"pid": os.getpid(), "seconds": time.perf_counter() - begun}


def main() -> None:
    root, listed, outcomes, jobs, library = sys.argv[1:6]
    sys.path.insert(0, root)
    import torch
    import torch._dynamo  # an optimizer's first step imports it: once here, not per child

    # The harness (its package imports every module) imported here, in the parent, so that
    # no child pays for it under valgrind.
    from benchmarks._harness.callgrind import NUMBER

    torch.set_num_threads(1)
    # The code torch picked for the CPU valgrind presents, which is not the host's
    # (callgrind.COUNTED_CPU says why that matters).
    with open(os.path.join(outcomes, "cpu"), "w") as picked:
        picked.write(torch.backends.cpu.get_cpu_capability())
    with open(listed) as listing:
        cases = json.load(listing)
    switch = ctypes.CDLL(library) if library else None
    if switch is not None:
        # A child's switch to instrumented code drops every translation it holds, torch's
        # import's included, at about a second a child; dropped here once, no child
        # inherits them (171 s to 108 s a commit, each count within its row's floor:
        # docs/explanation/measurement.md, "Instruction counts").
        switch.discard_translations()
    running = 0
    for index, case in enumerate(cases):
        if running == int(jobs):
            os.wait()
            running -= 1
        if os.fork() == 0:
            try:
                outcome = count(case, switch, NUMBER)
            except BaseException as error:
                outcome = {"error": f"{type(error).__name__}: {error}"}
            with open(os.path.join(outcomes, str(index)), "w") as written:
                json.dump(outcome, written)
            os._exit(0)
        running += 1
    while running:
        os.wait()
        running -= 1


if __name__ == "__main__":
    main()
