"""``python3 -m rubric_trainer serve``: the sidecar on stdio (see server.py and protocol.py).

Under torchrun: ``python3 -m torch.distributed.run --standalone --nproc_per_node N --redirects 2 --tee 2
-m rubric_trainer serve`` (the README says why those flags).
"""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rubric_trainer", description="The rubric toolkit's training sidecar (JSON lines over stdio).")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="answer requests on stdin/stdout until shutdown or end of input")
    serve.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's choice)")
    serve.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="stderr log level")
    args = parser.parse_args(argv)
    # Imported here so that `--help` answers without loading torch.
    from .server import serve as run

    run(threads=args.threads, log_level=args.log_level)
    return 0  # not reached: serve ends the process


if __name__ == "__main__":
    main()
