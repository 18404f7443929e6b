"""``python3 -m rubric_trainer serve``: the sidecar on stdio (see server.py and protocol.py).

Under torchrun: ``python3 -m torch.distributed.run --standalone --nproc_per_node N --redirects 2 --tee 2
-m rubric_trainer serve`` (the README says why those flags).
"""

from __future__ import annotations

import argparse
import os


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rubric_trainer", description="The rubric toolkit's training sidecar (JSON lines over stdio).")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="answer requests on stdin/stdout until shutdown or end of input")
    serve.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's choice)")
    serve.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="stderr log level")
    args = parser.parse_args(argv)
    # OpenMP's threads spin while they wait for work by default. On a machine whose cores are busy
    # with anything else (a second sidecar, a test runner, the user's own jobs) each of torch's
    # parallel regions then waits a time slice for its spinning peers: `rubric mu train` took 190 s
    # beside one busy core against 48 s alone, and 50 s with passive waiting (47 s alone). libgomp
    # reads this when torch loads it, so it is set before the import; a user's own setting wins.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    # Imported here so that `--help` answers without loading torch.
    from .server import serve as run

    run(threads=args.threads, log_level=args.log_level)
    return 0  # not reached: serve ends the process


if __name__ == "__main__":
    main()
