"""A writer that keeps putting keys into etcd while a member moves, as an apiserver would."""

from __future__ import annotations

import threading
import time

from automation.core.errors import RetryableError
from automation.etcd.client import EtcdClient


class Writer(threading.Thread):
    """Puts numbered keys until stopped, retrying temporary errors like any client would;
    records the keys etcd acknowledged and how long each took, retries included."""

    def __init__(self, client: EtcdClient, prefix: str) -> None:
        super().__init__(daemon=True, name="etcd-writer")
        self.client, self.prefix = client, prefix
        self.acked: list[str] = []
        self.latencies: list[float] = []
        self.retries = 0
        self.failure: BaseException | None = None
        self.halt = threading.Event()

    def run(self) -> None:
        try:
            while not self.halt.is_set():
                key = f"{self.prefix}{len(self.acked):06d}"
                started = time.monotonic()
                self._put(key)
                self.latencies.append(time.monotonic() - started)
                self.acked.append(key)
                self.halt.wait(0.005)  # pacing, ~a busy control plane's write rate
        except BaseException as exc:
            self.failure = exc

    def _put(self, key: str) -> None:
        while True:
            try:
                self.client.put(key, key)
                return
            except RetryableError:
                self.retries += 1
                self.halt.wait(0.05)
