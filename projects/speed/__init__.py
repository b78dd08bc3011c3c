"""Benchmark harness shared by the speed benchmarks (``tools/``): models built
from
the config files at any mmpretrain ViT arch, synthetic batches, the timed
training step (eager or compiled, fp32 / bf16 / fp16) and the GEMM peak,
worker processes that step in turns, memory readings and FLOP counting."""
from projects.speed.batches import (mae_batch, siameseim_batch,
                                    synthetic_geometry)
from projects.speed.memory import (mem_available_bytes, peak_rss_bytes,
                                   reset_peak_rss, room_for_another, rss_bytes)
from projects.speed.models import (arch_settings, build_benchmark_model,
                                   build_model, decoder_heads, mae_model_cfg,
                                   siameseim_model_cfg)
from projects.speed.report import (format_attention_table, format_table,
                                   format_unigrad_table, ratios)
from projects.speed.step import GemmStep, TrainStep, precision_context
from projects.speed.workers import GEMM, Worker, build_step, run, start_group

__all__ = [
    'mae_batch', 'siameseim_batch', 'synthetic_geometry',
    'mem_available_bytes', 'peak_rss_bytes', 'reset_peak_rss',
    'room_for_another', 'rss_bytes', 'arch_settings', 'build_benchmark_model',
    'build_model', 'decoder_heads', 'mae_model_cfg', 'siameseim_model_cfg',
    'format_table', 'ratios', 'format_attention_table', 'format_unigrad_table',
    'GemmStep', 'TrainStep', 'precision_context', 'GEMM', 'Worker',
    'build_step', 'run', 'start_group'
]
