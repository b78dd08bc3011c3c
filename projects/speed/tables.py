"""The speed benchmarks' published tables
(projects/speed/results/benchmark_*.json):

timings and memory, a measurement of one commit on one machine. The data
pipeline's is in pipeline.py.
"""
from projects.common.results import results_table
from projects.speed.checkpointing import table as checkpointing_rows
from projects.speed.report import (format_attention_table, format_table,
                                   format_unigrad_table)


@results_table('benchmark_pretrain')
def benchmark_pretrain_table(results: dict) -> str:
    data = dict(results['data'])
    return format_table(data.pop('rows'), data)


@results_table('benchmark_unigrad')
def benchmark_unigrad_table(results: dict) -> str:
    data = results['data']
    return format_unigrad_table(data['rows'], data.get('step_seconds'),
                                data.get('batch'))


@results_table('benchmark_attention')
def benchmark_attention_table(results: dict) -> str:
    data = results['data']
    s = data.get('settings', {})
    head = f'ViT-{s["arch"].upper()}, batch {s["batch"]}, ' \
        f'{s["img_size"]} px, patch {s["patch_size"]}, {s["masked"]} ' \
        f'masked patches; median of {s["repeats"]}.\n\n' if s else ''
    return head + format_attention_table(data['rows'])


@results_table('benchmark_checkpointing')
def checkpointing_table(results: dict) -> str:
    """Activation checkpointing's memory and time at ViT-B / ViT-L, and the
    memory model against the measured step
    (``projects/speed/tools/checkpointing.py``)."""
    data = results['data']
    lines = [checkpointing_rows(data['rows']), '']
    for arch, r in data['savings'].items():
        lines.append(
            f'ViT-{arch.upper()}: checkpointing keeps '
            f'{100 * r["activations_ratio"]:.0f} % of the activations per '
            f'image at {r["time_ratio"]:.2f}x the step time.')
    return '\n'.join(lines)
