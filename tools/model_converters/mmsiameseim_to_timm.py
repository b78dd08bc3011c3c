"""Export the pretrained ViT of a SiameseIM checkpoint with timm keys.

    python tools/model_converters/mmsiameseim_to_timm.py IN.pth OUT.pth

IN is one of our checkpoints (any checkpoint whose ``backbone.*`` is an
mmpretrain ``VisionTransformer``) or the authors' released checkpoint
(``{'model': ...}``, detected by its keys). OUT is a bare state dict with
timm ``VisionTransformer`` keys (``vit_base_patch16_224`` for ViT-B/16):
``cls_token``, ``pos_embed`` (cls position included), ``patch_embed.proj``,
``blocks.N.{norm1,attn.qkv,attn.proj,norm2,mlp.fc1,mlp.fc2}``. SiameseIM has
no final norm and no classifier, so ``norm.*`` and ``head.*`` are not
provided: load with ``timm.create_model('vit_base_patch16_224',
num_classes=0, final_norm=False)`` and ``load_state_dict(sd, strict=True)``
for features (or add a new head and norm and load with ``strict=False``
to fine-tune). Refuses (exit status 1) checkpoints it does not recognise
and backbones holding NaN or inf. OUT is written atomically (never a
partial file under its name) and may not be IN itself.
"""
import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('src', help='our or the official checkpoint')
    parser.add_argument('dst', help='output state dict')
    args = parser.parse_args(argv)

    from mmsiameseim.apis.convert import (format_report, save_converted,
                                          to_timm_vit)
    try:
        state, report = to_timm_vit(args.src)
        save_converted(state, args.src, args.dst)
    except (ValueError, FileNotFoundError) as e:  # the message names a file
        sys.exit(
            str(e) if str(e).startswith((args.src,
                                         args.dst)) else f'{args.src}: {e}')
    print(format_report(report))
    arch = report['arch']
    name = 'vit_base_patch16_224' if (
        arch['embed_dims'], arch['num_layers'], arch['patch_size'],
        arch['img_size'], arch['in_channels']) == (768, 12, 16, 224, 3) \
        else None
    model = (f"timm.create_model('{name}', num_classes=0"
             if name else 'timm.models.vision_transformer.VisionTransformer('
             f"img_size={arch['img_size']}, patch_size={arch['patch_size']}"
             f", in_chans={arch['in_channels']}, embed_dim="
             f"{arch['embed_dims']}, depth={arch['num_layers']}, "
             'num_heads=<heads>, mlp_ratio='
             f"{arch['feedforward_channels'] / arch['embed_dims']:g}, "
             'num_classes=0')
    print(f'wrote {args.dst}; load it into {model}, '
          f"final_norm={arch['final_norm']}) with strict=True")


if __name__ == '__main__':
    main()
