"""Runs learner (or model-written) code in a child process, never in ours.

A learner's own check runs in a child started once and kept warm (numba imported), so a run feels
instant. An untrusted check (a served room's learner's, a model's) runs in a fresh child forked for
it from a warm fork server (forkserver.py), killed with its folder when the verdict is in, so that
nothing one check does is seen by the next; its answer may hold no more than the outputs the runner
asked for, and is refused unread when it does. Every request has
a deadline: the child stops a simulated kernel itself at the soft limit (with the thread and line
where it spun), and if it does not answer by the hard limit it is killed and the next run starts a
fresh one. A crash, a `sys.exit` or an `os._exit` in learner code ends only the child; the caller
gets a Verdict that says so. The child is a sandbox.Child (cleared environment, own folder and
session, rlimits, seccomp, Landlock, no network), and it answers as wire messages, never pickle;
whatever else turns up in its session is killed after every request. The parent also watches the
GPU child's memory and kills it past its cap.
A GPU check first takes its turn in the machine-wide GPU queue (see gpulock), so that many learners
on one server do not all compile and launch at once; the simulator never queues.
"""

from __future__ import annotations

import os
import secrets
import threading
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from tutor.session import Session, Trust
from .process.gpulock import QueueCancelled, shared_queue
from .verdict import Failure, Verdict

BACKENDS = ("sim", "gpu", "numba-sim")
DEFAULT_TIMEOUT = 10.0
DEFAULT_MEMORY_MB = 4096
COLD_START_GRACE = 60.0  # numba's import and first compile, on a slow machine
BUSY_TIMING_RUNS = 5    # timed runs while others wait for the GPU (gpu.TIMING_RUNS when none do)
GRACE = 5.0
ANSWER_HEADER_MB = 64   # a check's verdict and traces (the largest reference's are about 6 MB)
SMALL_ANSWER_MB = 8     # a compile, a GPU's preparation, a ping: a verdict, no arrays


class RunnerError(Exception):
    """The backend itself failed (not the learner's code): e.g. no GPU, or a bug of ours."""


class Runner:
    """One warm child process for one backend. Thread-safe: one request at a time, and `cancel`
    may be called from another thread to abandon the request in flight."""

    def __init__(self, backend: str = "sim", *, timeout: float = DEFAULT_TIMEOUT,
                 memory_mb: int = DEFAULT_MEMORY_MB, content: str | Path | None = None, gpu_queue=None,
                 with_simulator: bool | None = None, session: Session | None = None):
        """`gpu_queue`: a gpulock.GpuQueue, None for the machine's shared one (GPU only), False for none.
        `with_simulator`: judge with our simulator's traced run beside this backend's (the default for a
        GPU and for Numba's simulator: one game on every backend, so a shared array read without a
        barrier fails on each, though only ours can see it)."""
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        self.backend = backend
        self.timeout = timeout
        self.memory_mb = memory_mb
        # the child's environment is cleared: a content folder named by GPU_TUTOR_CONTENT goes by hand
        self.session = session = session or Session()
        self.content = str(content) if content else session.content
        self._child = None   # the warm child, for the learner's own checks
        self._server = None  # the fork server, for untrusted checks (each in a fresh child)
        self._current = None  # the fresh child of the untrusted check in flight
        self._catalog = None
        self._lock = threading.Lock()
        self._shut = False  # shut_down(): no child starts again
        self._cancelled = False
        # the last GPU check's turn: {prepare_s, waited_s, held_s, turn, others_waiting, timing_runs}
        self.last_turn: dict | None = None
        if gpu_queue is None:
            gpu_queue = shared_queue(session.gpu_turns, session.gpu_queue, session.turns_notice) \
                if backend == "gpu" else False
        self.gpu_queue = gpu_queue or None
        # In a served room every check is untrusted, as a model's is (the real compiler accepts the
        # kernel before the simulator runs any of it, in a fresh child), since there one learner's code
        # runs as the server's user, beside everyone else's folders. None: as each check says.
        self.untrusted = "served" if session.trust == Trust.SERVED else None
        # A GPU judges outputs only; the simulator's traced run of the same inputs, in a warm child
        # of its own and at the same time, finds what a GPU hides (races, bounds, barriers, budgets).
        # On our simulator, a learner's own check hears the real compiler from a second warm child at
        # the same time (check's on_provisional): the simulator's verdict first, then the final one.
        self._compiler: Runner | None = None
        self._compiles_for: Runner | None = None  # set on a compiler's own runner: it compiles beside no one
        self.sim = Runner("sim", timeout=timeout, memory_mb=memory_mb, content=content, session=session) \
            if (backend != "sim" if with_simulator is None else with_simulator and backend != "sim") else None

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the child now (it warms up while the learner types). From the UI's thread: while a
        request is in flight there is a child already, and this returns at once. A served learner's
        runner starts its fork server instead: every check of theirs gets a fresh child."""
        if self._shut:
            return
        if self.sim is not None:
            self.sim.start()
        if self._compiles_beside:
            self._compiler_runner().start()
        if not self._lock.acquire(blocking=False):
            return
        try:
            if self.untrusted:
                self._fork_server().start()
            else:
                self._start()
        finally:
            self._lock.release()

    @property
    def _compiles_beside(self) -> bool:
        """A trusted simulator check compiles in a second child beside it; an untrusted one is
        compiled before it runs, in its own child, and a GPU compiles for real."""
        return self.backend == "sim" and not self.untrusted and self._compiles_for is None

    def _compiler_runner(self) -> Runner:
        if self._compiler is None:
            self._refuse_if_shut()
            self._compiler = Runner("sim", timeout=self.timeout, memory_mb=self.memory_mb, content=self.content,
                                    session=self.session, with_simulator=False)
            self._compiler._compiles_for = self
        return self._compiler

    def _fork_server(self):
        if self._server is None:
            self._refuse_if_shut()
            from .process.forkserver import ForkServer

            self._server = ForkServer("tutor.engine.child", [self.backend, self.content or ""],
                                      memory_mb=self.memory_mb, gpu=self.backend == "gpu",
                                      read_paths=[self.content] if self.content else [],
                                      env={"NUMBA_ENABLE_CUDASIM": "1" if self.backend == "numba-sim" else "0"})
        return self._server

    @contextmanager
    def _fresh_child(self, request):
        """An untrusted request's own process (a GPU check's preparation and run share it), killed
        with its folder when the verdict is in; a trusted one uses the warm child."""
        if not request.get("untrusted"):
            yield
            return
        server = self._fork_server()
        self._current = server.fork(start_grace=COLD_START_GRACE)
        try:
            yield
        finally:
            child, self._current = self._current, None
            child.kill()
            server.make_spare(start_grace=COLD_START_GRACE)  # the next check's process, forked now

    def _start(self) -> None:
        self._refuse_if_shut()
        if self._child is None:
            from .process.sandbox import Child

            # Our simulator's child compiles with the real Numba; only numba-sim uses Numba's simulator.
            # The GPU child gets no address-space cap (CUDA reserves huge virtual ranges); the
            # parent watches its resident memory instead.
            self._child = Child("tutor.engine.child", [self.backend, self.content or "", self._role],
                                memory_mb=self.memory_mb,
                                gpu=self.backend == "gpu", read_paths=[self.content] if self.content else [],
                                env={"NUMBA_ENABLE_CUDASIM": "1" if self.backend == "numba-sim" else "0"})
        self._child.start()

    @property
    def _role(self) -> str:
        """What the warm child will be asked (child.ROLES), so that it warms only that: a simulator
        check's own child never imports numba when its compiler check runs in another."""
        if self._compiles_for is not None:
            return "compile"
        return "simulate" if self._compiles_beside else ""

    def wait_ready(self) -> None:
        """Start the child (or the fork server) and wait until it has warmed up. After shut_down,
        from another thread while this waits, it returns without starting anything."""
        try:
            with self._lock:
                if self.untrusted:
                    self._fork_server().wait_ready(COLD_START_GRACE)
                    self._server.make_spare(start_grace=COLD_START_GRACE)
                else:
                    self._ask({"op": "ping"})
            if self.sim is not None:
                self.sim.wait_ready()
            if self._compiles_beside:
                self._compiler_runner().wait_ready()
        except RunnerError:
            if not self._shut:
                raise

    @property
    def pid(self) -> int | None:
        """The process id of the child running a request (a warm child keeps it between runs)."""
        child = self._current or self._child
        return child.proc.pid if child is not None and child.alive() else None

    def close(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            child.close()
        server, self._server = self._server, None
        if server is not None:
            server.close()
        if self.sim is not None:
            self.sim.close()
        compiler, self._compiler = self._compiler, None
        if compiler is not None:
            compiler.close()

    def shut_down(self) -> None:
        """Close for good, from any thread, at once: for an owner that is leaving (the app's quit, a
        backend switched away from). A request still in flight on another thread ends with the
        verdict of a stopped process instead of starting a child; the next asks raise RunnerError."""
        self._shut = True
        for runner in (self.sim, self._compiler):
            if runner is not None:
                runner._shut = True
        self.close()

    @property
    def is_shut_down(self) -> bool:
        return self._shut

    def _refuse_if_shut(self) -> None:
        if self._shut:
            raise RunnerError("the tutor is closing: this run was stopped")

    def cancel(self) -> None:
        """Abandon the request in flight (a newer run replaces it): the child is killed."""
        self._cancelled = True
        child = self._current or self._child
        if child is not None:
            child.terminate()  # the request's own thread sees it end, and cleans up
        if self.sim is not None:
            self.sim.cancel()
        if self._compiler is not None:
            self._compiler.cancel()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- requests -------------------------------------------------------------------------------
    def check(self, puzzle: str, source: str, filename: str = "kernel.py", *, seed: int | None = None,
              n_random: int = 3, keep_traces: bool = True, compile: bool = True, on_wait=None,
              untrusted: bool = False, on_provisional=None):
        """`on_wait(n)`: called while the run waits for the GPU, with how many are ahead of it.
        `on_provisional(result)`: a trusted simulator check asks the real compiler in a second child
        at the same time (the CLI's one check too: the simulator's child never waits for numba's
        import), and hears the simulator's result first through this, while the compiler works;
        the result returned is final (the compiler's word merged in).
        `untrusted`: a model wrote the code; on the simulator the real compiler must accept it before
        any of it runs (see judge.run_sim). A served learner's runner (SERVED_ENV) treats every check so.

        The answers never leave this process: the inputs are drawn and the reference computed here,
        the child runs the kernel on the inputs alone, and what it wrote is judged here."""
        beside_compiler = compile and self._compiles_beside and not untrusted
        if beside_compiler:
            self.start()  # both children start now: a cold CLI check's compiler need not wait for our imports
        from .judge import add_compile_result, plan

        if beside_compiler:
            compiled: list = []

            def ask_compiler():
                try:
                    compiled.append(self._compiler_runner().compile(puzzle, source, filename))
                except Exception as e:  # the compiler's word is advice on top of the simulator's: never fatal
                    compiled.append((None, f"the real-compiler check could not run: {e}"))

            beside = threading.Thread(target=ask_compiler, name="gpu-tutor-compile-beside", daemon=True)
            beside.start()
            result = self.check(puzzle, source, filename, seed=seed, n_random=n_random, keep_traces=keep_traces,
                                compile=False, on_wait=on_wait)
            if beside.is_alive() and on_provisional is not None:  # a copy: the verdict returned is completed below
                from .verdict import CheckResult

                on_provisional(CheckResult(replace(result.verdict, failures=list(result.verdict.failures),
                                                   notes=list(result.verdict.notes)), result.runs))
            beside.join()
            failure, note = compiled[0] if compiled else (None, "the real-compiler check could not run")
            add_compile_result(result.verdict, failure, note)
            return result
        spec = self._puzzle(puzzle)
        seed = secrets.randbits(31) if seed is None else seed
        planned = plan(spec, seed, n_random)
        request = {"op": "check", "puzzle": puzzle, "source": source, "filename": filename, "seed": seed,
                   "configs": [(p.config, p.inputs) for p in planned], "timeout": self.timeout,
                   "content": self.content, "compile": compile,
                   "untrusted": self.untrusted or ("model" if untrusted else False)}
        if self.sim is None:
            return self._judged(spec, request, planned, self._run(request, on_wait), keep_traces)
        from .judge import merge_device

        simulated: list = []
        # A GPU compiles the file for real, so the simulator skips its compiler check there (Numba's
        # simulator compiles nothing: there it stays). Model code is compiled before it runs on the
        # simulator either way (untrusted), as on the simulator backend.
        sim_request = dict(request, compile=compile and self.backend != "gpu")

        def simulate():
            try:
                simulated.append(self.sim._run(sim_request, None))
            except RunnerError as e:  # the simulator's own failure reaches the caller as the GPU's would
                simulated.append(e)

        beside = threading.Thread(target=simulate, name="gpu-tutor-sim-beside-gpu", daemon=True)
        beside.start()
        try:
            device = self._judged(spec, request, planned, self._run(request, on_wait), False)
        finally:
            beside.join()
        if simulated and isinstance(simulated[0], RunnerError):
            raise simulated[0]
        if not simulated:  # a bug of ours in the simulator's thread, reported by threading
            raise RunnerError("the simulator's run beside the GPU ended without an answer")
        return merge_device(self.sim._judged(spec, request, planned, simulated[0], keep_traces), device)

    def _run(self, request, on_wait):
        with self._lock:
            self._cancelled = False
            with self._fresh_child(request):
                return self._ask_in_turn(request, on_wait)

    def _judged(self, spec, request, planned, answer, keep_traces):
        from .judge import cleaned, judge
        from .verdict import CheckResult

        if isinstance(answer, Verdict):
            answer.puzzle, answer.seed = request["puzzle"], request["seed"]
            return CheckResult(answer)
        if not isinstance(answer, CheckResult) or len(answer.runs) > len(planned):
            return CheckResult(_verdict(request, self.backend, Failure(
                kind="runtime_error", message="The process running the kernel answered with something that is "
                                              "not a check's result; nothing it said was used.")))
        for run, p in zip(answer.runs, planned):  # the child sends back only what the kernel wrote
            run.config, run.inputs = p.config, p.inputs
            run.failures = [cleaned(f) for f in run.failures]
        answer.verdict.failures = [cleaned(f) for f in answer.verdict.failures]
        return judge(spec, answer, planned, keep_traces=keep_traces)

    def _puzzle(self, puzzle_id: str):
        from tutor.puzzles import ContentError, load_catalog

        if self._catalog is None:
            self._catalog = load_catalog(self.content, on_demand=True)
        try:
            return self._catalog.get(puzzle_id)
        except (KeyError, ContentError) as e:
            raise RunnerError(str(e).strip("'\"")) from None

    def compile(self, puzzle: str, source: str, filename: str = "kernel.py"):
        """Only the real-compiler check, for running beside a simulator check in another child:
        (Failure or None, note or None)."""
        request = {"op": "compile", "puzzle": puzzle, "source": source, "filename": filename,
                   "content": self.content, "untrusted": self.untrusted or False}
        with self._lock:
            self._cancelled = False
            with self._fresh_child(request):
                answer = self._ask(request)
        if isinstance(answer, Verdict):  # the compiler's child died or hung: say so, as a failure
            return answer.failures[0], None
        if not (isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], (Failure, type(None)))
                and isinstance(answer[1], (str, type(None)))):
            return Failure(kind="runtime_error", message="The compiler's process answered with something that "
                                                         "is not a compile check's result."), None
        return answer

    def _ask_in_turn(self, request, on_wait):
        """A GPU check holds the room's GPU only while its kernels run: the child loads and compiles
        the file (and sizes up its memory) before the turn, the parent judges after it. In the turn
        only the largest config is timed, and with fewer runs while others wait."""
        import time

        from .gpu import TIMING_RUNS, largest

        if self.gpu_queue is None or request.get("op") != "check":
            limits = answer_limits(request["configs"], self.backend, TIMING_RUNS) if request.get("op") == "check" \
                else None
            return self._ask(request, limits=limits)
        started = time.monotonic()
        self.last_turn = None
        prepared = self._ask({**request, "op": "prepare", "gpu_memory_mb": self.session.gpu_memory_mb})
        ready = time.monotonic()
        self.last_turn = {"prepare_s": ready - started, "waited_s": 0.0, "held_s": 0.0, "turn": False}
        if isinstance(prepared, Verdict) or not hasattr(prepared, "verdict") or prepared.verdict.failures:
            if hasattr(prepared, "verdict"):
                prepared.verdict.seed = request.get("seed")
            return prepared  # it never needed the GPU: a compile error waits for no one
        try:
            with self.gpu_queue.turn(on_wait=on_wait, cancelled=lambda: self._cancelled):
                got = time.monotonic()
                others = self.gpu_queue.waiting()
                runs = TIMING_RUNS if not others else BUSY_TIMING_RUNS
                configs = request["configs"]
                timed = [largest(configs)]
                # compiled and warm: the turn's whole limit is the learner's, so an endless kernel
                # holds the room's GPU no longer than that
                answer = self._ask({**request, "timing_runs": runs, "timed": timed}, limit=self.timeout,
                                   limits=answer_limits(configs, self.backend, runs, timed))
                held = time.monotonic() - got
        except QueueCancelled:
            return _verdict(request, self.backend, Failure(kind="runtime_error",
                                                           message="The run was cancelled by a newer one."))
        self.last_turn = {"prepare_s": ready - started, "waited_s": got - ready, "held_s": held, "turn": True,
                          "others_waiting": others, "timing_runs": runs}
        if hasattr(answer, "verdict") and self.backend == "gpu":
            name = configs[timed[0]][0].name
            said = f"timed only the largest config ({name}), {runs} runs"
            if others:
                said += (f", not {TIMING_RUNS}: {others} other learner(s) were waiting for the GPU, so its "
                         "median is rougher")
            answer.verdict.notes.append(said)
        return answer

    def _ask(self, request, limit: float | None = None, limits=None):
        from .process.forkserver import START_GRACE, ForkedChild
        from .process.sandbox import ChildDied, ChildFailed, ChildTimeout

        child = self._current
        if child is None:
            self._start()
            child = self._child
        if limit is None or not child.answered:
            first = START_GRACE if isinstance(child, ForkedChild) else COLD_START_GRACE  # a fork has numba warm
            limit = self.timeout + GRACE + (0 if child.answered else first)
        watch = self._watch_memory if self.backend == "gpu" else None
        try:
            answer, _ = child.ask(request, timeout=limit, start_grace=COLD_START_GRACE, watch=watch,
                                  limits=limits or small_answer())
        except ChildTimeout:
            return _verdict(request, self.backend, Failure(
                kind="timeout",
                message=(f"The kernel did not finish within {limit:.0f} s and its process was stopped. Look "
                         "for a loop whose condition never changes.")))
        except ChildDied as e:
            return self._died(e, request)
        except ChildFailed as e:
            if e.name == "BackendUnavailable":
                raise RunnerError(e.message) from None
            if e.name in ("KeyError", "ContentError"):
                raise RunnerError(e.message.strip("'\"")) from None
            raise RunnerError(f"the {self.backend} backend failed: {e.name}: {e.message}\n{e.tb}") from None
        finally:
            child.end_request()
        if child.notes and hasattr(answer, "verdict"):
            answer.verdict.notes += [n for n in child.notes if n not in answer.verdict.notes]
        return answer

    def _watch_memory(self, child) -> None:
        if child.proc is not None and _rss_mb(child.proc.pid) > self.memory_mb:
            child.terminate()

    def _died(self, error, request):
        if self._cancelled:
            return _verdict(request, self.backend, Failure(kind="runtime_error",
                                                           message="The run was cancelled by a newer one."))
        if error.why:  # the parent ended it, for something it did (its answer, its folder)
            return _verdict(request, self.backend, Failure(
                kind="runtime_error", message=f"The process running the kernel was stopped: {error.why}. Nothing "
                                              "it sent was used; the tutor itself is fine."))
        why = error.how(self.memory_mb)
        return _verdict(request, self.backend, Failure(
            kind="runtime_error",
            message=(f"The process running the kernel {why}. Something in the file ended it (os._exit, a "
                     "crash in native code, or too much memory); the tutor itself is fine.")))


def answer_limits(configs: list, backend: str, timing_runs: int, timed: list[int] | None = None):
    """What a check's answer may hold: what each config's kernel wrote (an output each), and on a GPU
    each timed config's outputs of every timed run; a verdict and its traces as the header."""
    from .judge import fresh_output
    from .process.wire import Limits

    outputs = [fresh_output(config).nbytes for config, _ in configs]
    if backend == "gpu":
        outputs += [timing_runs * outputs[n] for n in (range(len(configs)) if timed is None else timed)]
    return Limits.of(ANSWER_HEADER_MB, outputs)


def small_answer():
    from .process.wire import Limits

    return Limits.of(SMALL_ANSWER_MB)


def _verdict(request, backend, failure) -> Verdict:
    return Verdict(puzzle=request.get("puzzle", ""), backend=backend, failures=[failure],
                   seed=request.get("seed"))


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def gpu_present(session: Session | None = None) -> bool:
    """A cheap look for an NVIDIA device, without importing numba (which costs a second); never
    one the session says not to use."""
    if session is not None and session.no_gpu:
        return False
    return any(os.path.exists(p) for p in ("/dev/nvidia0", "/dev/nvidiactl", "/proc/driver/nvidia/version"))


def default_backend(session: Session | None = None) -> str:
    return "gpu" if gpu_present(session) else "sim"
