"""A sidecar that breaks the wire on purpose, one way per request, then answers properly.

Put on PYTHONPATH in place of the real package (client.test.ts), it shows the client failing each
call at once instead of waiting for the request timeout: a torn line, a NaN (not JSON), a reply to
an id nobody asked, a line past the client's cap.
"""

import json
import os
import sys


def out(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


out(json.dumps({"method": "ready", "params": {"pid": os.getpid(), "version": "0", "torch": "0", "world_size": 1}}))
count = 0
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    count += 1
    rid = request["id"]
    if count == 1:
        out('{"id": %d, "result": {"ok": tr' % rid)
    elif count == 2:
        out('{"id": %d, "result": {"ok": true, "loss": NaN}}' % rid)
    elif count == 3:
        out(json.dumps({"id": 999, "result": {"ok": True}}))
    elif count == 4:
        out(json.dumps({"id": rid, "result": {"pad": "x" * 5000}}))
    else:
        health = {"ok": True, "version": "0", "pid": os.getpid(), "torch": "0", "threads": 1, "cuda": False, "world_size": 1, "transformers": False, "policy": None, "mu": None}
        out(json.dumps({"id": rid, "result": health}))
