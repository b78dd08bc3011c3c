"""Convert the authors' SiameseIM checkpoint to an mmsiameseim checkpoint.

    python tools/model_converters/official_to_mmsiameseim.py IN.pth OUT.pth \
        [--num-heads 12 --decoder-num-heads 16]

IN is the official format (``{'model': state_dict}`` as released, or a bare
state dict). OUT is an mmengine checkpoint of our ``SiameseIM`` (online
branch, predictor and momentum target) whose ``backbone.*`` keys load into a
plain mmpretrain ``VisionTransformer`` with ``init_cfg=dict(type='Pretrained',
checkpoint=OUT, prefix='backbone.')``. A file that is not an official
checkpoint is refused (exit status 1) with a message naming it, the keys
that were expected and those it has, in its own (official) key names; so
is one whose weights hold NaN or inf (the tensors named). OUT is written
atomically (never a partial file under its name) and may not be IN.
"""
import argparse
import os
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('src', help='official checkpoint')
    parser.add_argument('dst', help='output checkpoint')
    parser.add_argument(
        '--num-heads',
        type=int,
        default=12,
        help='encoder heads (ViT-B/L: 12/16)')
    parser.add_argument(
        '--decoder-num-heads',
        type=int,
        default=16,
        help='projector/predictor heads (released: 16)')
    args = parser.parse_args(argv)

    import mmsiameseim  # noqa: F401
    from mmsiameseim.apis import (build_from_official,
                                  siameseim_cfg_from_official_arch)
    from mmsiameseim.apis.convert import save_converted
    from mmsiameseim.apis.official import (infer_official_arch,
                                           load_official_state_dict)
    from mmsiameseim.checkpoint import check_finite
    try:
        state = load_official_state_dict(args.src)
        check_finite(state, args.src)  # named by the file, not a dict
        model = build_from_official(state, args.num_heads,
                                    args.decoder_num_heads)
        arch = infer_official_arch(state)
        cfg = siameseim_cfg_from_official_arch(arch, args.num_heads,
                                               args.decoder_num_heads)
        save_converted(
            dict(
                state_dict=model.state_dict(),
                meta=dict(
                    converted_from=os.path.basename(args.src),
                    model_cfg=repr(cfg))), args.src, args.dst)
    except (ValueError, FileNotFoundError) as e:
        # the file, what was expected and what it holds, in its own names
        sys.exit(
            str(e) if str(e).startswith((args.src,
                                         args.dst)) else f'{args.src}: {e}')
    n_backbone = sum(k.startswith('backbone.') for k in model.state_dict())
    print(f'wrote {args.dst}: {len(model.state_dict())} tensors '
          f'({n_backbone} backbone.*), arch {arch}')


if __name__ == '__main__':
    main()
