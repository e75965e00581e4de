"""What a run shows while it measures. A measurement is one library at one
operation and size in one round; it counts as done when its record arrives
from the library's PE 0 (libraries.stream_records), so the count is what
has been measured, not what was started.

On a terminal: one line on stderr, rewritten in place every second (which
library, operation and size is running, how many of how many measurements
are done, the time so far and an estimate of the time left), erased at the
end for one closing line. Elsewhere (a pipe, a file, CI): the same words as
plain lines, when a library's run ends and every PLAIN_EVERY seconds.
With --quiet: nothing."""

import os
import shutil
import statistics
import sys
import threading
import time

from symmem.bench import plan

TICK = 1.0  # seconds between redraws of the terminal line
PLAIN_EVERY = 20.0  # seconds between plain lines


def planned(ops, opts):
    """The (op, size) measurements of ops (comma-separated) in one round,
    in the order the workers make them."""
    return [
        (op, size)
        for op in ops.split(",")
        if op and not (op == "put_signal" and opts.pes < 2)
        for size in plan.sizes(op, opts.min_bytes, opts.max_bytes, opts.pes)
    ]


def mode_for(stream, quiet):
    """ "line" on a terminal, "plain" elsewhere, None with quiet."""
    if quiet:
        return None
    return "line" if stream.isatty() and os.environ.get("TERM") != "dumb" else "plain"


def clock(seconds):
    """seconds as m:ss, or h:mm:ss from an hour."""
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02}:{rest % 60:02}" if hours else f"{rest // 60}:{rest % 60:02}"


class Estimate:
    """Seconds left. A measurement (library, op, size) still to come takes
    as long as it did in an earlier round; else as long as the same op and
    size took the other libraries (the median); else a + b * w, w the bytes
    its timed runs move (moved()): a, the median time of the half of the
    measurements so far that move least; b, from the one that moved most,
    once one has moved MOVED_MIN (smaller ones tell noise from bytes too
    poorly to extrapolate: until then b is 0 and the estimate low). A
    library's start (launch and init) takes as long as its last one, else
    the mean of the others'."""

    MOVED_MIN = 16 << 20

    def __init__(self):
        self.took, self.starts = {}, {}  # {(lib, op, size): s}, {lib: s}
        self.by_size = {}  # {(op, size): [s of each library's]}

    def measured(self, lib, op, size, seconds):
        self.took[lib, op, size] = seconds
        self.by_size.setdefault((op, size), []).append(seconds)

    def started(self, lib, seconds):
        self.starts[lib] = seconds

    def _model(self):
        points = sorted((moved(size), s) for (_, _, size), s in self.took.items())
        a = statistics.median(s for _, s in points[: max(1, len(points) // 2)])
        w, s = points[-1]
        return a, max(0.0, (s - a) / w) if w >= self.MOVED_MIN else 0.0

    def _guess(self, lib, op, size, a, b):
        if (lib, op, size) in self.took:
            return self.took[lib, op, size]
        if (op, size) in self.by_size:
            return statistics.median(self.by_size[op, size])
        return a + b * moved(size)

    def seconds(self, measurements, starts):
        """For the measurements [(lib, op, size)] and library starts [lib]
        still to come; None before the first measurement."""
        if not self.took:
            return None
        a, b = self._model()
        mean_start = sum(self.starts.values()) / len(self.starts) if self.starts else 0.0
        return sum(self._guess(*m, a, b) for m in measurements) + sum(
            self.starts.get(lib, mean_start) for lib in starts
        )


def moved(size):
    """The bytes one timed run of a size moves (the estimate's w)."""
    return size * plan.iterations(size)


class Progress:
    """runs: [(library, round, [(op, size)])] in the order they will run;
    mode: "line", "plain" or None (mode_for)."""

    def __init__(self, runs, mode, out=None):
        self.runs, self.mode, self.out = runs, mode, out or sys.stderr
        self.rounds = max((round_ for _, round_, _ in runs), default=0) + 1
        self.total = sum(len(measurements) for _, _, measurements in runs)
        self.done_total, self.done = 0, set()  # all runs'; the running run's
        self.current, self.position = None, 0  # the running run; the first to come
        self.estimate, self.lock = Estimate(), threading.Lock()
        self.began = self.last = self.last_plain = time.monotonic()
        self.initialised, self.stop = False, threading.Event()
        if mode:
            threading.Thread(target=self._tick, daemon=True).start()

    # ---- what main tells it ----

    def begin(self, index):
        """Run runs[index] starts."""
        with self.lock:
            self.current = self.position = index
            self.done, self.initialised = set(), False
            self.last = self.run_began = time.monotonic()
            self._draw()

    def measured(self, record):
        """A record of the running library arrived."""
        lib, _, measurements = self.runs[self.current]
        now = time.monotonic()
        with self.lock:
            if not self.initialised:  # the library's launch and init
                self.initialised = True
                if record["op"] == "init":
                    self.last = now
                self.estimate.started(lib, self.last - self.run_began)
            key = (record["op"], record.get("bytes"))
            if key in measurements and key not in self.done:
                self.done.add(key)
                self.done_total += 1
                self.estimate.measured(lib, *key, now - self.last)
                self.last = now
            self._draw()

    def end(self, index):
        """Run runs[index] is over (measured, failed or left out): what it did
        not measure leaves the total."""
        lib, round_, measurements = self.runs[index]
        with self.lock:
            ran = index == self.current
            self.total -= len(measurements) - (len(self.done) if ran else 0)
            self.current, self.position = None, index + 1
            if ran and self.mode == "plain":
                self._plain(
                    f"[{lib}{self._round(round_)}] done in "
                    f"{clock(time.monotonic() - self.run_began)}"
                )

    def say(self, line):
        """Prints line on stdout, the terminal line redrawn below it."""
        with self.lock:
            self._erase()
            print(line, flush=True)
            self._draw()

    def close(self):
        """The closing line; the terminal line erased."""
        self.stop.set()
        with self.lock:
            if self.mode:
                self._erase()
                self.out.write(
                    f"symmem.bench: {self.done_total} measurements in "
                    f"{clock(time.monotonic() - self.began)}\n"
                )
                self.out.flush()
            self.mode = None

    # ---- what it shows ----

    def text(self):
        """Where the run is, in words: what runs, then the counts."""
        left = self.estimate.seconds(*self._to_come())
        counts = (
            f"{self.done_total}/{self.total} measured, "
            f"{clock(time.monotonic() - self.began)} so far, "
            + (f"about {clock(left)} left" if left is not None else "estimating the rest")
        )
        if self.current is None:
            return counts
        lib, round_, measurements = self.runs[self.current]
        running = next((m for m in measurements if m not in self.done), None)
        what = (
            "starting"
            if not self.initialised
            else f"{running[0]} {plan.format_size(running[1])}"
            if running
            else "finishing"
        )
        return f"[{lib}{self._round(round_)}] {what}: {counts}"

    def _round(self, round_):
        return f" round {round_ + 1}/{self.rounds}" if self.rounds > 1 else ""

    def _to_come(self):
        """([(lib, op, size)] measurements, [lib] starts) still to come."""
        measurements, starts = [], []
        for i in range(self.position, len(self.runs)):
            lib, _, planned_ = self.runs[i]
            running = i == self.current
            if not (running and self.initialised):
                starts.append(lib)
            measurements += [(lib, *m) for m in planned_ if not (running and m in self.done)]
        return measurements, starts

    def _draw(self):
        if self.mode == "line":
            width = shutil.get_terminal_size((80, 24)).columns - 1
            self.out.write("\r" + self.text()[:width] + "\x1b[K")
            self.out.flush()

    def _erase(self):
        if self.mode == "line":
            self.out.write("\r\x1b[K")
            self.out.flush()

    def _plain(self, prefix=""):
        self.out.write(f"symmem.bench: {prefix + '; ' if prefix else ''}{self.text()}\n")
        self.out.flush()
        self.last_plain = time.monotonic()

    def _tick(self):
        while not self.stop.wait(TICK):
            with self.lock:
                if self.mode == "line":
                    self._draw()
                elif self.mode == "plain" and time.monotonic() - self.last_plain >= PLAIN_EVERY:
                    self._plain()
