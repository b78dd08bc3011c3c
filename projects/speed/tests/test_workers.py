import argparse

from projects.speed import memory, room_for_another, start_group, workers


def test_another_worker_starts_only_while_memory_holds_it(monkeypatch):
    """The grouping: with the free memory of a 24 GB machine and ViT-B
    sized workers (peaks measured after warm-up), seven workers run in
    groups of as many as fit, never all at once."""
    gib = 2**30
    total, alive = 22 * gib, []  # free with no worker running

    class FakeWorker:

        def __init__(self, ctx, name, precision, args, builders=None):
            self.name, self.precision = name, precision
            alive.append(self)

        def ask(self, command):
            return 5 * gib if command == 'rss' else 0.1

    monkeypatch.setattr(workers, 'mem_available_bytes',
                        lambda: total - 5 * gib * len(alive))
    args = argparse.Namespace(warmup=2, device='cpu', max_workers=7)
    todo = [(p, m) for p in ('fp32', 'bf16') for m in 'abcd'][:7]
    sizes = []
    while todo:
        group = []
        start_group(None, todo, args, group, worker_cls=FakeWorker)
        assert all(w.first_step_s == 0.1 for w in group)
        sizes.append(len(group))
        alive.clear()
    # 22 GiB: a second worker needs 1.5 x 5 GiB + 0.5 GiB beside the first
    # (17 GiB free: yes), a third beside two (12 GiB: yes), a fourth
    # beside three (7 GiB: no)
    assert sizes == [3, 3, 1]

    assert room_for_another([gib], 2 * gib)
    assert not room_for_another([gib], int(1.9 * gib))
    assert not room_for_another([gib], None)  # unknown: in sequence


def test_memory_readings_are_this_process():
    before = memory.peak_rss_bytes()
    assert 0 < memory.rss_bytes() <= before
    memory.reset_peak_rss()
    assert memory.peak_rss_bytes() <= before
    assert memory.mem_available_bytes() > 0
