"""Plugin entry point: serve the stand-in ``aws`` provider and print the port.

The engine starts the plugin executable (a launcher installed by
:mod:`automation.sandbox.provider.install` that execs this module), reads the port from
its first line of stdout, and talks gRPC to it until it is done.
"""

from __future__ import annotations

import logging
import os
import sys
from concurrent import futures

import grpc
from pulumi.runtime.proto import provider_pb2_grpc

from automation.sandbox.provider.servicer import AwsProvider


def main() -> int:
    log_file = os.environ.get("KUBESHIFT_SANDBOX_PROVIDER_LOG")
    if log_file:
        logging.basicConfig(
            filename=log_file, level=logging.INFO, format="%(asctime)s %(name)s %(message)s"
        )
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=16),
        options=[("grpc.max_receive_message_length", 400 * 1024 * 1024)],
    )
    provider_pb2_grpc.add_ResourceProviderServicer_to_server(AwsProvider(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    sys.stdout.write(f"{port}\n")
    sys.stdout.flush()
    server.wait_for_termination()
    return 0


if __name__ == "__main__":
    sys.exit(main())
