"""Memory readings of a benchmark process (Linux /proc)."""
import os
from typing import List, Optional

# Another worker starts only while the free memory covers this many times
# the largest peak a worker has shown, plus the reserve: its own peak, and
# the step of a running worker (they step in turns) above its idle size.
HEADROOM = 1.5
RESERVE_BYTES = 512 * 2**20


def peak_rss_bytes() -> int:
    """Peak resident set of this process (VmHWM)."""
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) * 1024
    raise RuntimeError('no VmHWM in /proc/self/status')


def rss_bytes() -> int:
    """Resident set of this process now."""
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')


def reset_peak_rss() -> None:
    """Peak resident set (VmHWM) := the current one."""
    with open('/proc/self/clear_refs', 'w') as f:
        f.write('5')


def mem_available_bytes() -> Optional[int]:
    """MemAvailable of /proc/meminfo, or None."""
    try:
        with open('/proc/meminfo') as f:
            for line in f:
                if line.startswith('MemAvailable:'):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def room_for_another(peaks: List[int], available: Optional[int]) -> bool:
    """Whether one more worker fits beside the running ones.

    Args:
        peaks (list[int]): Peak bytes of the workers measured so far.
        available (int | None): Free bytes now (MemAvailable, or the
            device's free memory); None (unknown) means no.
    """
    if available is None or not peaks:
        return False
    return available >= HEADROOM * max(peaks) + RESERVE_BYTES
