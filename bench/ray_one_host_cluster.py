"""A Ray cluster of several nodes on one host: a head without GPUs and one raylet per GPU, each raylet
seeing only its own GPU (CUDA_VISIBLE_DEVICES), as two hosts of one GPU each would. It is how a lent
2-GPU host stands in for two nodes (issue 38); on a machine without GPUs the raylets declare GPUs Ray
only counts, which rehearses the same commands with the synthetic engine.

    python bench/ray_one_host_cluster.py --gpus 0 1 --address-file /tmp/ray-address &
    # ... run-all against the address the file holds, then stop it:
    kill %1

The cluster lives as long as this process: SIGTERM or SIGINT shuts it down. ray.cluster_utils starts
real raylets, the processes `ray start` starts, all of one session.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gpus", nargs="+", required=True, help="one raylet per GPU index given")
    parser.add_argument("--address-file", type=Path, required=True, help="written once every node is up")
    parser.add_argument("--cpus-per-node", type=int, default=max((os.cpu_count() or 2) // 4, 1))
    args = parser.parse_args()

    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "num_gpus": 0, "include_dashboard": False},
    )
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        for gpu in args.gpus:
            cluster.add_node(num_cpus=args.cpus_per_node, num_gpus=1, env_vars={"CUDA_VISIBLE_DEVICES": gpu})
        cluster.wait_for_nodes()
        partial = args.address_file.with_name(args.address_file.name + ".partial")
        partial.write_text(cluster.address + "\n")
        partial.replace(args.address_file)
        print(f"Ray cluster at {cluster.address}: a head and {len(args.gpus)} raylet(s)", file=sys.stderr)
        stop.wait()
    finally:
        cluster.shutdown()
        args.address_file.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
