"""Memory probe for every Python process started with this folder first on PYTHONPATH: a daemon
thread writes, every 0.25 s, the process's CUDA bytes allocated and reserved (GiB) and the garbage
collector's counts to $PROBE_DIR/mem-PID.txt; with PROBE_GC set it also collects at each sample
(to tell memory held by reference cycles from memory held by live objects). run.sh drives it."""
import gc
import os
import sys
import threading
import time


def _sample() -> None:
    folder = os.environ.get("PROBE_DIR")
    if not folder:
        return
    with open(os.path.join(folder, f"mem-{os.getpid()}.txt"), "a") as log:
        log.write(f"# {' '.join(sys.argv)} {os.environ.get('LADDER_CONTESTANT', 'judge')}\n")
        while True:
            time.sleep(0.25)
            torch = sys.modules.get("torch")
            try:
                if torch is not None and torch.cuda.is_initialized():
                    if os.environ.get("PROBE_GC"):
                        gc.collect()
                    log.write(f"{time.time():.2f} {torch.cuda.memory_allocated() / 2**30:.2f} "
                              f"{torch.cuda.memory_reserved() / 2**30:.2f} {gc.get_count()}\n")
                    log.flush()
            except Exception as error:  # noqa: BLE001 - torch half imported: sample again later
                log.write(f"err {error}\n")
                log.flush()


threading.Thread(target=_sample, daemon=True).start()
