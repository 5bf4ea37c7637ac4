"""A text progress bar on stderr: redrawn in place with \\r on a terminal, a line every
tenth of the way (and at the end) otherwise, so that logs stay short."""

import sys
import time


class Progress:
    """Progress(total, label).step() after each unit of work; done() at the end."""

    WIDTH = 30

    def __init__(self, total, label, stream=None, enabled=True):
        self.total = max(int(total), 1)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.count = 0
        self.start = time.monotonic()
        try:
            self.tty = self.stream.isatty()
        except (AttributeError, ValueError):
            self.tty = False
        self._last_tenth = 0
        if self.enabled and self.tty:
            self._draw()

    def _bar(self):
        filled = int(self.WIDTH * self.count / self.total)
        return "[" + "#" * filled + "." * (self.WIDTH - filled) + "]"

    def _draw(self):
        elapsed = time.monotonic() - self.start
        self.stream.write(f"\rinfer-quantize: {self.label} {self._bar()} {self.count}/{self.total} "
                          f"({elapsed:.1f} s)")
        self.stream.flush()

    def step(self, n=1):
        self.count = min(self.count + n, self.total)
        if not self.enabled:
            return
        if self.tty:
            self._draw()
            return
        tenth = self.count * 10 // self.total
        if tenth > self._last_tenth:
            self._last_tenth = tenth
            self._line()

    def _line(self):
        self.stream.write(f"infer-quantize: {self.label} {self._bar()} {self.count}/{self.total} "
                          f"({100 * self.count // self.total}%)\n")
        self.stream.flush()

    def done(self):
        if not self.enabled:
            return
        if self.tty:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()
        elif self._last_tenth != 10:
            self.count = self.total
            self._last_tenth = 10
            self._line()
