"""Export the pretrained ViT of a SiameseIM checkpoint for mmpretrain.

    python tools/model_converters/mmsiameseim_to_mmpretrain.py IN.pth OUT.pth

IN is one of our checkpoints (e.g. ``work_dirs/.../epoch_400.pth``; any
checkpoint whose ``backbone.*`` is an mmpretrain ``VisionTransformer``) or the
authors' released checkpoint (``{'model': ...}``, detected by its keys).
OUT keeps only ``backbone.*`` and loads into a plain ``VisionTransformer``
built with ``final_norm=False`` (SiameseIM has no final norm) through
``init_cfg=dict(type='Pretrained', checkpoint=OUT, prefix='backbone.')``.
Neck, head and momentum target are dropped; the tool prints what it kept
and dropped and refuses (exit status 1) checkpoints it does not recognise
and backbones holding NaN or inf. OUT is written atomically (never a
partial file under its name) and may not be IN itself.
"""
import argparse
import os
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('src', help='our or the official checkpoint')
    parser.add_argument('dst', help='output checkpoint')
    args = parser.parse_args(argv)

    from mmsiameseim.apis.convert import (format_report, save_converted,
                                          to_mmpretrain_backbone)
    try:
        state, report = to_mmpretrain_backbone(args.src)
        save_converted(
            dict(
                state_dict=state,
                meta=dict(
                    converted_from=os.path.basename(args.src),
                    source=report['source'],
                    arch=report['arch'])), args.src, args.dst)
    except (ValueError, FileNotFoundError) as e:  # the message names a file
        sys.exit(
            str(e) if str(e).startswith((args.src,
                                         args.dst)) else f'{args.src}: {e}')
    print(format_report(report))
    arch = report['arch']
    print(f'wrote {args.dst}; load it with VisionTransformer(arch=dict('
          f"embed_dims={arch['embed_dims']}, num_layers={arch['num_layers']}"
          f', num_heads=<heads>, feedforward_channels='
          f"{arch['feedforward_channels']}), img_size={arch['img_size']}, "
          f"patch_size={arch['patch_size']}, in_channels="
          f"{arch['in_channels']}, final_norm={arch['final_norm']}, "
          f"init_cfg=dict(type='Pretrained', checkpoint='{args.dst}', "
          "prefix='backbone.'))")


if __name__ == '__main__':
    main()
