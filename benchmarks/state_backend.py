"""What keeping the journal and run lock in the stack's S3 backend costs per step, against
the ``file://`` backend (the same documents in a directory), in the same run.

Run on demand (not part of the test suite):

    .venv/bin/python benchmarks/state_backend.py [--steps 40] [--runs 5] [--records 300]
    .venv/bin/python benchmarks/state_backend.py --smoke   # the checks only (CI)

The S3 side is the sandbox's moto server (``automation.sandbox.moto_server``, real HTTP
on loopback, one request at a time), so the figures are loopback round trips plus
moto's work, a lower bound for a bucket in the region (tens of milliseconds a request).
Each run opens a journal that already holds ``--records`` steps (a vpc-move at example
scale journals about 300) and journals ``--steps`` more, each started and finished as
the runner does (two replaces of the whole document); then it renews the run lock
``--steps`` times. Figures: the median over runs of each run's median seconds per step
and per renewal, for each backend, and their ratio.

Checked (``ok``/``FAIL`` lines, exit 1 on a failure): every step written on either
backend reads back finished, and the lock's holder and lease read back renewed; two
writers racing on the S3 journal both find their steps in it.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import boto3

from automation.aws.state_objects import S3Backend, S3Document
from automation.config.lock_settings import LeaseSettings
from automation.core.documents import Document, FileDocument
from automation.run.journal import Journal
from automation.run.run_lock import RunLock, read_holder
from automation.sandbox.moto_server import MotoServer

BUCKET = "bench-state"
REGION = "us-east-1"
SMOKE_HELP = "3 steps, 1 run, 20 records: the checks, no figures"


def _seeded(document: Document, records: int) -> None:
    journal = Journal(document, "bench")
    for index in range(records):
        journal.record("earlier", f"s{index}").message = "x" * 120
    journal.save()


def _journal_steps(document: Document, steps: int) -> tuple[list[float], bool]:
    """Seconds per step (start and finish) and whether every step reads back done."""
    journal = Journal(document, "bench")
    seconds = []
    for index in range(steps):
        began = time.perf_counter()
        journal.start("phase", f"step-{index}")
        journal.finish("phase", f"step-{index}", "done")
        seconds.append(time.perf_counter() - began)
    again = Journal(document, "bench")
    return seconds, all(again.is_done("phase", f"step-{i}") for i in range(steps))


def _renewals(document: Document, renewals: int) -> tuple[list[float], bool]:
    """Seconds per lease renewal (a replace over the version written), and whether the
    holder read back is this run with its latest renewal."""
    quiet = LeaseSettings(lease_seconds=3600, renew_seconds=3600)  # renewed here, timed
    lock = RunLock(document, "bench", "bench-run", quiet)
    lock.acquire()
    acquired = read_holder(document)
    seconds = []
    try:
        for _ in range(renewals):
            began = time.perf_counter()
            lock.renew()
            seconds.append(time.perf_counter() - began)
        held = read_holder(document)
        ok = (
            held is not None and acquired is not None and held[0].run_id == "bench-run"
            and held[0].renewed >= acquired[0].renewed
        )  # fmt: skip
    finally:
        lock.release()
    return seconds, ok and read_holder(document) is None


def _racing_writers(make: Callable[[], Document]) -> bool:
    """Two journals on one document, writing at once: both find all their steps."""
    start = threading.Barrier(2)

    def write(name: str) -> None:
        journal = Journal(make(), "bench")
        start.wait()
        for index in range(5):
            journal.start(name, f"s{index}")
            journal.finish(name, f"s{index}")

    threads = [threading.Thread(target=write, args=(n,)) for n in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    journal = Journal(make(), "bench")
    return all(journal.is_done(n, f"s{i}") for n in ("a", "b") for i in range(5))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--records", type=int, default=300)
    parser.add_argument("--smoke", action="store_true", help=SMOKE_HELP)
    args = parser.parse_args()
    if args.smoke:
        args.steps, args.runs, args.records = 3, 1, 20

    for name, value in {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench"}.items():
        os.environ[name] = value  # moto's; kubeshift's client reads the default chain
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    server = MotoServer().start()
    client = boto3.client("s3", region_name=REGION, endpoint_url=server.url)
    client.create_bucket(Bucket=BUCKET)
    url = f"s3://{BUCKET}?region={REGION}&endpoint={server.url}&use_path_style=true"
    backend = S3Backend.parse(url)
    s3 = backend.client()
    figures: dict[str, list[float]] = {"file step": [], "s3 step": [], "file renew": [],
                                       "s3 renew": []}  # fmt: skip
    checks: dict[str, bool] = {
        "every journalled step reads back finished, on both backends": True,
        "the renewed lock reads back this run's, then none once released": True,
    }
    try:
        with tempfile.TemporaryDirectory() as scratch:
            for run in range(args.runs):
                places: dict[str, Callable[[str], Document]] = {
                    "file": lambda name, run=run: FileDocument(Path(scratch) / f"{run}-{name}"),
                    "s3": lambda name, run=run: S3Document(s3, BUCKET, f"{run}/{name}"),
                }
                for side, place in places.items():
                    _seeded(place("journal.json"), args.records)
                    steps, done = _journal_steps(place("journal.json"), args.steps)
                    renewals, held = _renewals(place("lock.json"), args.steps)
                    figures[f"{side} step"].append(statistics.median(steps))
                    figures[f"{side} renew"].append(statistics.median(renewals))
                    checks["every journalled step reads back finished, on both backends"] &= done
                    checks["the renewed lock reads back this run's, then none once released"] &= (
                        held
                    )
            checks["two writers racing on the S3 journal both find their steps"] = _racing_writers(
                lambda: S3Document(s3, BUCKET, "race/journal.json")
            )
    finally:
        server.stop()

    if not args.smoke:
        print(f"{args.runs} runs, {args.steps} steps each, over a journal of {args.records}")
        for what in ("step", "renew"):
            file_s = statistics.median(figures[f"file {what}"])
            s3_s = statistics.median(figures[f"s3 {what}"])
            label = "journal write per step" if what == "step" else "lock renewal"
            print(
                f"{label:24} file {file_s * 1000:7.2f} ms   s3 (moto) {s3_s * 1000:7.2f} ms"
                f"   s3/file {s3_s / file_s:5.1f}x"
            )
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
