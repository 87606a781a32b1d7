"""Lint many files on several CPUs: forked workers, each linting a share of the files.

A lint of a repository's configs is a fresh process per CI job; its files are independent, so on a
machine with several CPUs they are shared out as flake8 and pylint do. The workers are forks of the
process after it has loaded the rules and linted the first files (what that loaded is not loaded
again), and each sends its results back through a pipe, pickled. The calling process lints a share
itself.

Used only where a fork is safe and cheap: Linux, one thread in the process (a fork copies no other
thread, so a lock one of them holds would never be released in the child), and enough files to pay
for it. A worker that fails for any reason has its share linted again by the caller, so the result
is the sequential one in every case; on an interruption the workers are killed and reaped before it
goes on.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Files per worker below which a fork does not pay: linting a file takes a few milliseconds, and a
# fork, the pickling of a worker's results and the caches each process warms for itself cost about as
# much as a handful of files (benchmarks/bench_lint.py).
MIN_FILES_PER_WORKER = 8
MAX_WORKERS = 8


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_count(files: int, jobs: int | None = None) -> int:
    """How many processes lint ``files`` files (1: this one alone). ``jobs``: the user's cap (None:
    the CPUs this process may use)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return 1
    import threading

    if threading.active_count() != 1:
        return 1
    wanted = available_cpus() if jobs is None else jobs
    return max(1, min(wanted, MAX_WORKERS, files // MIN_FILES_PER_WORKER))


def map_in_workers(func: Callable[[T], R], items: Sequence[T], workers: int) -> list[R]:
    """``[func(item) for item in items]`` in ``workers`` processes (this one included). ``func``'s
    results must pickle.

    This process computes the first items alone before it forks: much of a lint's time goes into
    what a process does once (the modules and rules a kind of file first needs, the catalog entries
    it first reads), and a worker forked afterwards inherits it. The rest is dealt out in turn; a
    share no worker could be forked for is computed here.
    """
    if workers <= 1 or len(items) < 2:
        return [func(item) for item in items]
    import pickle

    first = len(items) // (2 * workers)
    results: list[R | None] = [func(item) for item in items[:first]]
    results += [None] * (len(items) - first)
    sys.stdout.flush()
    sys.stderr.flush()
    children: list[tuple[int, int, list[int]]] = []     # (pid, read end of its pipe, its items)
    here = list(range(first, len(items), workers))
    try:
        for worker in range(1, workers):
            share = list(range(first + worker, len(items), workers))
            try:
                read_fd, write_fd = os.pipe()
            except OSError:
                here += share
                continue
            try:
                pid = os.fork()
            except OSError:                               # no process to spare: this one does it
                os.close(read_fd)
                os.close(write_fd)
                here += share
                continue
            if pid == 0:                                  # the worker: never returns
                _work(func, items, share, read_fd, write_fd)
            os.close(write_fd)
            children.append((pid, read_fd, share))
        for index in here:
            results[index] = func(items[index])
        while children:
            pid, read_fd, share = children[0]
            pipe = os.fdopen(read_fd, "rb")
            children[0] = (pid, -1, share)               # the file object closes it from here on
            with pipe:
                data = pipe.read()
            _pid, status = os.waitpid(pid, 0)
            children.pop(0)
            got = None
            if status == 0:
                try:
                    got = pickle.loads(data)
                except Exception:
                    got = None
            if not isinstance(got, list) or len(got) != len(share):
                got = [func(items[index]) for index in share]      # the worker failed: its share here
            for index, value in zip(share, got, strict=True):
                results[index] = value
        return results  # type: ignore[return-value]
    finally:
        for pid, read_fd, _share in children:            # left only when something was raised
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            if read_fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(read_fd)


def _work(func: Callable[[T], R], items: Sequence[T], share: list[int], read_fd: int, write_fd: int) -> None:
    import pickle  # already loaded by the caller, before the fork

    code = 1
    try:
        # The caller's handlers print the one "interrupted" line and stop children: not a worker's
        # job. A signal ends a worker at once; the caller kills and reaps the rest.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.close(read_fd)
        data = pickle.dumps([func(items[index]) for index in share], protocol=5)
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view):]
        code = 0
    finally:
        os._exit(code)        # no atexit handlers, no buffered output of the caller written twice
