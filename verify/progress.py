"""The progress of a run of claims: how many are done, which are running, and the time left.

On a terminal, one tqdm line (claims done of the total, the claims running now, the time left),
refreshed every second and removed when the run ends; elsewhere (a log, CI), one line per
finished claim. The time left is the stored seconds of the claims still to run (the newest record
of each claim, :func:`expected_seconds`; 5 s for a claim never run) divided by the pace seen so
far in this run (stored seconds finished per second of wall time), which takes in the number of
workers and the speed of this machine; before the first claim ends it assumes the stored pace
shared by ``jobs`` workers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TextIO

#: seconds assumed for a claim that has no stored record
UNKNOWN_SECONDS = 5.0


def expected_seconds(folders: Iterable[Any], scale: str = "quick") -> dict[str, float]:
    """Claim id -> the ``seconds`` of its newest non-error record at ``scale`` in ``folders``
    (later folders win; a folder without ``claims.jsonl`` is skipped).

    >>> expected_seconds(["/nonexistent"])
    {}
    """
    from verify.results import latest_records

    return {cid: float(r["seconds"]) for cid, r in latest_records(scale, folders).items() if r.get("seconds")}


def bar_shape() -> dict[str, int]:
    """tqdm's ``ncols`` and ``nrows`` for a bar on this terminal. A terminal that reports 0
    columns and 0 rows (the pseudo-terminal of ``script``, some CI runners) makes tqdm hide its
    bar, as if it had no row to draw it on; :func:`shutil.get_terminal_size` falls back to 100x24.

    >>> sorted(bar_shape())
    ['ncols', 'nrows']
    """
    import shutil

    size = shutil.get_terminal_size((100, 24))
    return {"ncols": size.columns, "nrows": size.lines}


def duration(seconds: float | None) -> str:
    """``seconds`` in words short enough for a progress line.

    >>> duration(None), duration(42), duration(125), duration(4000)
    ('?', '42 s', '2 min 5 s', '1 h 6 min')
    """
    if seconds is None:
        return "?"
    s = int(round(max(0.0, float(seconds))))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {(s % 3600) // 60} min"


class RunProgress:
    """Progress of one run of the claims ``claim_ids``: call :meth:`started` when a claim starts
    and :meth:`finished` with its record when it ends; :meth:`close` at the end (or use ``with``).

    ``bar`` shows the terminal line (tqdm, on ``stream``, default stderr); ``lines`` prints one
    line per finished claim instead. ``expected`` maps claim ids to stored seconds, ``jobs`` is
    the number of workers, ``clock`` the time source (tests pass a fake one).

    >>> import io
    >>> out = io.StringIO()
    >>> ticks = iter([0.0, 10.0, 10.0])
    >>> p = RunProgress(["a", "b"], {"a": 10, "b": 30}, lines=True, stream=out, clock=lambda: next(ticks))
    >>> p.started("a")
    >>> p.finished({"id": "a", "status": "pass", "seconds": 10.0})
    >>> print(out.getvalue().strip())
    [1/2] pass  a  10.0 s  (30 s left, running: -)
    >>> p.close()
    """

    def __init__(
        self,
        claim_ids: Sequence[str],
        expected: Mapping[str, float] | None = None,
        *,
        jobs: int = 1,
        bar: bool = False,
        lines: bool = False,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        refresh_s: float = 1.0,
    ) -> None:
        import sys

        self.ids = list(claim_ids)
        self.expected = {cid: float((expected or {}).get(cid, UNKNOWN_SECONDS)) for cid in self.ids}
        self.jobs = max(1, int(jobs))
        self.stream = stream if stream is not None else sys.stderr
        self.lines = bool(lines) and not bar
        self.clock = clock
        self.start = clock()
        self.done: list[str] = []
        self.running: list[str] = []
        self._paced = 0.0  # stored seconds of the claims finished by this run (not resumed)
        self._lock = threading.Lock()
        self._bar = None
        self._stop = threading.Event()
        if bar:
            from tqdm import tqdm

            self._bar = tqdm(
                total=len(self.ids),
                file=self.stream,
                **bar_shape(),
                leave=False,
                unit="claim",
                bar_format="claims {n_fmt}/{total_fmt} |{bar:20}| {elapsed}{postfix}",
            )
            self._ticker = threading.Thread(target=self._tick, args=(refresh_s,), daemon=True)
            self._ticker.start()

    def seconds_left(self) -> float:
        """The expected wall seconds until every claim is done (see the module's docstring).

        >>> RunProgress(["a"], {"a": 8.0}, jobs=2).seconds_left()
        4.0
        """
        remaining = sum(self.expected[c] for c in self.ids if c not in set(self.done))
        elapsed = self.clock() - self.start
        if self._paced > 0 and elapsed > 0:
            return remaining * elapsed / self._paced
        return remaining / self.jobs

    def _postfix(self) -> str:
        running = ", ".join(self.running) or "-"
        return f"{duration(self.seconds_left())} left, running: {running}"

    def _tick(self, every: float) -> None:
        while not self._stop.wait(every):
            with self._lock:
                if self._bar is not None:
                    self._bar.set_postfix_str(self._postfix(), refresh=True)

    def started(self, claim_id: str) -> None:
        """``claim_id`` starts now (several may run at once, one per worker)."""
        with self._lock:
            if claim_id not in self.running:
                self.running.append(claim_id)
            if self._bar is not None:
                self._bar.set_postfix_str(self._postfix(), refresh=True)

    def finished(self, record: Mapping[str, Any]) -> None:
        """The claim of ``record`` is done (a resumed record counts as done, not towards the pace)."""
        cid = str(record.get("id"))
        with self._lock:
            if cid in self.running:
                self.running.remove(cid)
            if cid not in self.done:
                self.done.append(cid)
                if not record.get("resumed"):
                    self._paced += self.expected.get(cid, UNKNOWN_SECONDS)
            if self._bar is not None:
                self._bar.update(1)
                self._bar.set_postfix_str(self._postfix(), refresh=True)
            elif self.lines:
                status = str(record.get("status", "?"))
                seconds = record.get("seconds") or 0.0
                left = duration(self.seconds_left()) if len(self.done) < len(self.ids) else "none"
                print(
                    f"[{len(self.done)}/{len(self.ids)}] {status}  {cid}  {float(seconds):.1f} s  "
                    f"({left} left, running: {', '.join(self.running) or '-'})",
                    file=self.stream,
                    flush=True,
                )

    def close(self) -> None:
        """Stop the refresh and remove the terminal line."""
        self._stop.set()
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
