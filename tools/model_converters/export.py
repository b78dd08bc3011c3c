"""Export a pretrained ViT as a folder that timm or transformers loads.

    python tools/model_converters/export.py CHECKPOINT --format timm \
        --out DIR [--config PRETRAIN_CONFIG] [--results FILE]
    python tools/model_converters/export.py CHECKPOINT \
        --format transformers --out DIR

CHECKPOINT is a SiameseIM or mmpretrain ViT checkpoint as mmengine's Runner
writes it (its pretraining config is read from it, else given with
``--config``). DIR gets ``model.safetensors`` and ``config.json`` (timm:
``architecture``, ``model_args`` and ``pretrained_cfg``; transformers: a
``ViTConfig``, and ``preprocessor_config.json``), and a ``README.md`` model
card naming the config, data, epochs and ``--results``. Needs the export
extra: ``pip install -e .[export]``.

An ``--out`` folder that holds files is refused unless ``--overwrite``.

timm, with the export's own input size, channels, mean and std::

    model = timm.create_model('local-dir:DIR', pretrained=True)
    transform = timm.data.create_transform(
        **timm.data.resolve_model_data_config(model))

transformers (offline)::

    processor = AutoImageProcessor.from_pretrained('DIR')
    model = ViTModel.from_pretrained('DIR', add_pooling_layer=False)
    x = processor(image, return_tensors='pt')['pixel_values']
    tokens = model(x, output_hidden_states=True).hidden_states[-1]

Wrong or incomplete checkpoints are refused, naming the file and the keys.
"""
import argparse
import os
import sys


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('checkpoint')
    p.add_argument('--format', required=True, choices=('timm', 'transformers'))
    p.add_argument('--out', required=True, help='output folder')
    p.add_argument('--config', default=None, help='pretraining config')
    p.add_argument(
        '--results', default=None, help='results file the card names')
    p.add_argument(
        '--overwrite',
        action='store_true',
        help='replace the files of an --out folder that holds some')
    args = p.parse_args(argv)
    import mmsiameseim  # noqa: F401
    from mmsiameseim.apis.export import (OutputExists, model_card, timm_files,
                                         transformers_files, write_export)
    make = timm_files if args.format == 'timm' else transformers_files
    if os.path.isdir(args.out) and os.listdir(args.out) \
            and not args.overwrite:  # before any work
        sys.exit(f'--out {args.out} already holds files; export into a new '
                 'folder, or replace them with --overwrite')
    try:
        files = make(args.checkpoint, args.config)
    except (ValueError, KeyError, FileNotFoundError) as e:
        text = str(e)
        sys.exit(
            text if text.startswith(args.checkpoint
                                    ) else f'{args.checkpoint}: {text}')
    card = model_card(args.format, files, args.checkpoint, args.results,
                      args.config)
    try:
        write_export(files, args.out, card, overwrite=args.overwrite)
    except OutputExists as e:
        sys.exit(str(e))
    arch = files['arch']
    print(f'wrote {args.out} ({args.format}): {arch["num_layers"]} blocks, '
          f'{arch["embed_dims"]} wide, {arch["num_heads"]} heads, patch '
          f'{arch["patch_size"]}, {arch["img_size"]} px, final norm '
          f'{arch["final_norm"]}')
    return args.out


if __name__ == '__main__':
    main()
