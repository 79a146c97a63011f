"""Where a heavy step's tasks run: worker processes on this machine, or a Ray cluster.

Why one small interface: the steps that outgrow one machine (MMNeedle's render, image hashing
and the duplicate checks, OCR, ScanNet frame extraction) are maps of a pure function over
independent tasks. A step writes its function and its tasks once; the executor only decides
where they run. Both executors

- return results **in task order**, so what a step writes does not depend on the executor or
  on the number of workers (the tests compare the bytes of both);
- keep a bounded number of tasks in flight (``window``), so memory is bounded by the task
  size, not by the dataset;
- report a task's own error (a corrupt image naming its file) as that error.

``local`` (the default) is a forkserver process pool (or the calling process for one worker).
``ray`` submits each chunk of tasks as a Ray task: to the cluster at ``address`` or
``$RAY_ADDRESS``, or to a Ray started here when neither is set; a task whose worker dies is
retried (``max_retries``), and a killed run resumes from what the step had already written,
exactly as with ``local``. Ray is an optional dependency (``pip install 'benchsmith[ray]'``).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.fork_server import imports_as_here as imports_as_here
from benchsmith.core.fork_server import preload_in_pools as preload_in_pools
from benchsmith.core.fork_server import start_fork_server
from benchsmith.core.math_threads import MATH_THREAD_VARIABLES as MATH_THREAD_VARIABLES
from benchsmith.core.math_threads import one_math_thread, user_chose_math_threads
from benchsmith.core.workers import usable_cores

EXECUTORS = ("local", "ray")


def workers_setting(
    default: int = 2, what: str = "worker processes", *, every_core: bool = False
) -> Any:
    """The ``workers`` field of a step's settings dataclass (:mod:`benchsmith.core.settings`),
    declared once for every step that runs on an executor; ``every_core``: 0 asks for one
    worker per core."""
    from benchsmith.core.settings import setting

    help = f"{what}, or Ray tasks at once" + ("; 0: every core" if every_core else "")
    return setting(default, help, minimum=0 if every_core else 1, metavar="N",
                   shapes_output=False)  # fmt: skip


def executor_setting(work: str) -> Any:
    """The ``executor`` field of a step's settings dataclass; ``work`` says what runs there
    ("images are hashed")."""
    from benchsmith.core.settings import setting

    return setting(
        "local",
        f"where {work}: local worker processes, or a Ray cluster ($RAY_ADDRESS, else a Ray "
        "started here); the output is the same either way",
        choices=EXECUTORS,
        shapes_output=False,
    )


@dataclass(frozen=True)
class ExecutorConfig:
    """``kind``: ``local`` or ``ray``; ``workers``: processes (local) or tasks running at once
    (ray), 0 for every usable core / every CPU of the cluster; ``address``: a Ray cluster
    (default ``$RAY_ADDRESS``, else a local Ray); ``max_retries``: Ray retries of a task whose
    worker died."""

    kind: str = "local"
    workers: int = 0
    address: str | None = None
    max_retries: int = 3

    def __post_init__(self) -> None:
        if self.kind not in EXECUTORS:
            raise BenchsmithError(
                f"unknown executor {self.kind!r}",
                fix=f"use one of: {', '.join(EXECUTORS)}",
            )
        if not isinstance(self.workers, int) or self.workers < 0:
            raise BenchsmithError(
                f"workers must be a whole number >= 0, got {self.workers!r}",
                fix="0 means every usable core",
            )
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise BenchsmithError(f"max_retries must be >= 0, got {self.max_retries!r}")

    @property
    def in_process(self) -> bool:
        """One local worker: the tasks run in the calling process (no pool, nothing pickled),
        so a step may hand them what it already has open."""
        return self.kind == "local" and self.workers == 1


class Executor(ABC):
    """Ordered, bounded ``map`` of a picklable module-level function over tasks."""

    workers: int = 1

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    @abstractmethod
    def map(
        self,
        fn: Callable[[Any], Any],
        tasks: Iterable[Any],
        *,
        chunksize: int = 1,
        ahead: int | None = None,
    ) -> Iterator[Any]:
        """``fn`` over ``tasks`` in chunks of ``chunksize``; results in task order.

        ``ahead``: chunks submitted before their results are read (default ``2 x workers``).
        Why a caller raises it: the workers only get new chunks while the caller reads
        results, so a caller that works between reads (a writer that reads eight results,
        then writes them out for 30 ms) leaves the workers idle once ``ahead`` chunks are
        done; enough chunks ahead keep them busy through it. It also bounds what finished
        results wait in memory (or on disk) for the caller."""

    def call(self, fn: Callable[[Any], Any], argument: Any) -> Any:
        """``fn(argument)`` where the tasks run (in a worker: what it can import and see)."""
        return next(iter(self.map(fn, [argument])))


class LocalExecutor(Executor):
    """A forkserver pool of ``workers`` processes (the calling process for one). ``preload``
    names modules the fork server imports once, so every worker starts with them loaded
    (with those named by :func:`preload_in_pools`)."""

    def __init__(self, workers: int = 0, preload: Sequence[str] = ()):
        self.workers = max(1, workers or usable_cores())
        self.preload = list(preload)
        self._pool: Any = None

    def __enter__(self) -> LocalExecutor:
        if self.workers > 1:
            start_fork_server(self.preload)  # unless it runs (then it keeps what it loaded)
            # free when this process's fork server started with one math thread (see there)
            initializer = None if user_chose_math_threads() else one_math_thread
            self._pool = multiprocessing.get_context("forkserver").Pool(
                self.workers, initializer=initializer
            )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.terminate() if exc[0] else self._pool.close()
            self._pool.join()
            self._pool = None

    def map(
        self,
        fn: Callable[[Any], Any],
        tasks: Iterable[Any],
        *,
        chunksize: int = 1,
        ahead: int | None = None,
    ) -> Iterator[Any]:
        if self._pool is None:
            return map(fn, tasks)
        return self._ordered(fn, tasks, max(1, chunksize), ahead or 2 * self.workers)

    def _ordered(
        self, fn: Callable[[Any], Any], tasks: Iterable[Any], size: int, ahead: int
    ) -> Iterator[Any]:
        """At most ``ahead`` chunks submitted ahead of the results read (``Pool.imap`` would
        read the whole task iterable at once)."""
        pending: deque[Any] = deque()
        for chunk in _chunks(tasks, size):
            pending.append(self._pool.apply_async(_run_chunk, (fn, chunk)))
            if len(pending) >= ahead:
                yield from pending.popleft().get()
        while pending:
            yield from pending.popleft().get()

    def call(self, fn: Callable[[Any], Any], argument: Any) -> Any:
        return self._pool.apply(fn, (argument,)) if self._pool is not None else fn(argument)


def _run_chunk(fn: Callable[[Any], Any], chunk: list[Any]) -> list[Any]:
    """One chunk of tasks, in order (module level, so workers import it by name)."""
    return [fn(task) for task in chunk]


def _chunks(tasks: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(tasks)
    while chunk := list(islice(iterator, size)):
        yield chunk


class RayExecutor(Executor):
    """Chunks of tasks as Ray tasks, at most ``window`` chunks in flight, results in order."""

    def __init__(
        self,
        workers: int = 0,
        address: str | None = None,
        max_retries: int = 3,
        window: int | None = None,
    ):
        self.requested = workers
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.max_retries = max_retries
        self.window = window
        self._started_here = False
        self._remote: Any = None

    def __enter__(self) -> RayExecutor:
        # no usage reports to Ray's servers: a build talks to nothing but its own cluster
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        ray = import_ray()
        if not ray.is_initialized():
            options: dict[str, Any] = {
                "include_dashboard": False,
                "logging_level": logging.WARNING,
                "log_to_driver": True,
            }
            if self.address:
                options["address"] = self.address
            else:  # a Ray of our own, on this machine, with the CPUs asked for
                options["num_cpus"] = self.requested or usable_cores()
            ray.init(**options)
            self._started_here = True
        cluster_cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = max(1, self.requested or cluster_cpus)
        self._remote = ray.remote(num_cpus=1, max_retries=self.max_retries)(_run_chunk)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._started_here:
            import_ray().shutdown()
            self._started_here = False

    def get(self, ref: Any) -> Any:
        """The value of a Ray object reference; a task's own error raised as itself."""
        return _get(import_ray(), ref)

    def map(
        self,
        fn: Callable[[Any], Any],
        tasks: Iterable[Any],
        *,
        chunksize: int = 1,
        ahead: int | None = None,
    ) -> Iterator[Any]:
        if self._remote is None:
            raise RuntimeError("RayExecutor.map outside its `with` block")
        return self._ordered(fn, tasks, max(1, chunksize), ahead or self.window)

    def _ordered(
        self, fn: Callable[[Any], Any], tasks: Iterable[Any], size: int, ahead: int | None
    ) -> Iterator[Any]:
        ray = import_ray()
        window = ahead or 2 * self.workers
        pending: deque[Any] = deque()
        fn_ref = ray.put(fn)  # shipped once, not once per chunk
        for chunk in _chunks(tasks, size):
            pending.append(self._remote.remote(fn_ref, chunk))
            if len(pending) >= window:
                yield from _get(ray, pending.popleft())
        while pending:
            yield from _get(ray, pending.popleft())


def _get(ray: Any, ref: Any) -> Any:
    """A task's result; a task's own exception is raised as itself (a SourceError naming a
    corrupt file stays that), not wrapped in Ray's."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, BaseException):
            raise cause from None
        raise


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise BenchsmithError(
            "the ray executor needs Ray, which is not installed",
            fix="pip install 'benchsmith[ray]' (or choose executor: local)",
        ) from None
    return ray


def open_executor(config: ExecutorConfig, preload: Sequence[str] = ()) -> Executor:
    """The executor ``config`` asks for (enter it with ``with``)."""
    if config.kind == "ray":
        return RayExecutor(config.workers, config.address, config.max_retries)
    return LocalExecutor(config.workers, preload)
