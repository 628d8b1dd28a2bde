"""Cleanup that never hangs on a process that will not go: reaping is bounded, and a worker that
could not be reaped gets a reason that says so."""
import subprocess
import sys
import time

from ladder.runner import sandbox
from ladder.runner.isolation import crash_reason


def test_reaping_a_process_that_is_still_there_gives_up_after_its_timeout():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        started = time.monotonic()
        assert not sandbox.reap(process, timeout_s=0.2)
        assert time.monotonic() - started < 5
    finally:
        process.kill()
    assert sandbox.reap(process, timeout_s=10) and process.returncode < 0


def test_a_worker_not_reaped_is_reported_as_stuck_not_as_exited():
    reason = crash_reason(None, [])
    assert "still not gone" in reason and "status None" not in reason
