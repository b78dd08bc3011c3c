from typing import Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from mmcv.cnn.bricks import DropPath
from mmcv.cnn.bricks.transformer import FFN, PatchEmbed
from mmdet.registry import MODELS
from mmengine.logging import print_log
from mmengine.model import BaseModule
from torch import nn

from ...checkpoint import (KeyReport, adapt_vit_checkpoint, read_state_dict,
                           resize_pos_embed_to)

ARCHS = {
    'b':
    dict(
        embed_dims=768, num_layers=12, num_heads=12,
        feedforward_channels=3072),
}


def rel_pos_table(q_size: int, k_size: int,
                  table: torch.Tensor) -> torch.Tensor:
    """Relative position embeddings for each (query, key) pair on one axis.

    The learned ``table`` has one row per relative offset; when the attention
    span differs from the one it was built for it is linearly resized.

    Returns:
        Tensor: (q_size, k_size, head_dim).
    """
    num_offsets = 2 * max(q_size, k_size) - 1
    if table.shape[0] != num_offsets:
        table = F.interpolate(
            table.t().unsqueeze(0), size=num_offsets,
            mode='linear').squeeze(0).t()
    q_coords = torch.arange(q_size)[:, None] * max(k_size / q_size, 1.0)
    k_coords = torch.arange(k_size)[None, :] * max(q_size / k_size, 1.0)
    offsets = q_coords - k_coords + (k_size - 1) * max(q_size / k_size, 1.0)
    return table[offsets.long()]


class RelPosAttention(nn.Module):
    """Multi-head self-attention on a 2-D grid with decomposed relative
    position bias (MViTv2 / ViTDet): separate height and width tables.

    Args:
        embed_dims (int): Channels.
        num_heads (int): Heads.
        grid_size (tuple[int, int]): Grid the relative tables are sized for
            (the window, or the whole feature map for global blocks).
    """

    def __init__(self, embed_dims: int, num_heads: int, grid_size: Tuple[int,
                                                                         int]):
        super().__init__()
        self.num_heads = num_heads
        head_dims = embed_dims // num_heads
        self.scale = head_dims**-0.5
        self.qkv = nn.Linear(embed_dims, embed_dims * 3)
        self.proj = nn.Linear(embed_dims, embed_dims)
        # New keys, absent from pretraining checkpoints: zero = no bias.
        self.rel_pos_h = nn.Parameter(
            torch.zeros(2 * grid_size[0] - 1, head_dims))
        self.rel_pos_w = nn.Parameter(
            torch.zeros(2 * grid_size[1] - 1, head_dims))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, H, W, C) -> (B, H, W, C)."""
        B, H, W, C = x.shape
        qkv = self.qkv(x).reshape(B, H * W, 3, self.num_heads, -1)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # (B, heads, HW, d)
        attn = (q * self.scale) @ k.transpose(-2, -1)

        Rh = rel_pos_table(H, H, self.rel_pos_h)
        Rw = rel_pos_table(W, W, self.rel_pos_w)
        q_grid = q.reshape(B, self.num_heads, H, W, -1)
        bias_h = torch.einsum('bnhwc,hkc->bnhwk', q_grid, Rh)
        bias_w = torch.einsum('bnhwc,wkc->bnhwk', q_grid, Rw)
        attn = attn.view(B, self.num_heads, H, W, H, W)
        attn = attn + bias_h[..., :, None] + bias_w[..., None, :]
        attn = attn.view(B, self.num_heads, H * W, H * W).softmax(dim=-1)

        out = (attn @ v).transpose(1, 2).reshape(B, H, W, C)
        return self.proj(out)


def window_partition(x: torch.Tensor, window: int):
    """(B, H, W, C) -> (B * nWindows, window, window, C), zero-padding H and W
    up to multiples of ``window``; also returns the padded size."""
    B, H, W, C = x.shape
    pad_h, pad_w = (-H) % window, (-W) % window
    x = F.pad(x, (0, 0, 0, pad_w, 0, pad_h))
    Hp, Wp = H + pad_h, W + pad_w
    x = x.view(B, Hp // window, window, Wp // window, window, C)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(-1, window, window, C)
    return x, (Hp, Wp)


def window_unpartition(x: torch.Tensor, window: int, padded: Tuple[int, int],
                       size: Tuple[int, int]) -> torch.Tensor:
    """Inverse of :func:`window_partition`, dropping the padding."""
    (Hp, Wp), (H, W) = padded, size
    B = x.shape[0] // (Hp * Wp // window // window)
    x = x.view(B, Hp // window, Wp // window, window, window, -1)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(B, Hp, Wp, -1)
    return x[:, :H, :W].contiguous()


class ViTDetBlock(BaseModule):
    """Pre-norm ViT block with window or global attention.

    Parameter names follow mmpretrain's ``TransformerEncoderLayer``
    (``ln1``, ``attn.qkv``, ``attn.proj``, ``ln2``, ``ffn.layers.*``) so
    pretraining weights load as they are.

    Args:
        embed_dims (int): Channels.
        num_heads (int): Heads.
        feedforward_channels (int): MLP hidden size.
        window_size (int): Window side; 0 means global attention.
        grid_size (tuple[int, int]): Feature-map size of global blocks.
        drop_path_rate (float): Stochastic depth of this block.
    """

    def __init__(self,
                 embed_dims: int,
                 num_heads: int,
                 feedforward_channels: int,
                 window_size: int,
                 grid_size: Tuple[int, int],
                 drop_path_rate: float = 0.):
        super().__init__()
        self.window_size = window_size
        self.ln1 = nn.LayerNorm(embed_dims, eps=1e-6)
        attn_grid = (window_size, window_size) if window_size else grid_size
        self.attn = RelPosAttention(embed_dims, num_heads, attn_grid)
        self.drop_path = DropPath(drop_path_rate)
        self.ln2 = nn.LayerNorm(embed_dims, eps=1e-6)
        self.ffn = FFN(
            embed_dims=embed_dims,
            feedforward_channels=feedforward_channels,
            num_fcs=2,
            ffn_drop=0.,
            dropout_layer=dict(type='DropPath', drop_prob=drop_path_rate),
            act_cfg=dict(type='GELU'))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, H, W, C)."""
        shortcut = x
        x = self.ln1(x)
        if self.window_size:
            size = x.shape[1:3]
            x, padded = window_partition(x, self.window_size)
            x = self.attn(x)
            x = window_unpartition(x, self.window_size, padded, size)
        else:
            x = self.attn(x)
        x = shortcut + self.drop_path(x)
        return self.ffn(self.ln2(x), identity=x)


@MODELS.register_module()
class ViTDetViT(BaseModule):
    """Plain ViT backbone of ViTDet (Li et al., 2022) for mmdet.

    Window attention in most blocks, global attention in a few
    (``global_attn_indexes``), decomposed relative position bias in every
    block, and the pretraining absolute position embedding resized to the
    feature map at every forward. Outputs the last block's map at stride
    ``patch_size`` (no final norm), for :class:`SimpleFPN`.

    ``init_cfg=dict(type='Pretrained', checkpoint=..., prefix='backbone.')``
    loads our pretraining checkpoints (mmpretrain ``VisionTransformer`` key
    names) directly through the package's ViT checkpoint adapter
    (:func:`~mmsiameseim.checkpoint.adapt_vit_checkpoint`): the position
    table is resized when the checkpoint's grid differs from
    ``pretrain_img_size``, a 1-channel patch embedding is replicated over RGB
    (weights / 3, so a gray image gives the same response), and the loaded,
    adapted, new and dropped keys are logged. A
    checkpoint that lacks any weight but the relative position tables is
    refused (see :meth:`load_pretrained`; ``allow_partial=True`` in
    ``init_cfg`` accepts one, logging the counts). ``keep_init`` in
    ``init_cfg`` leaves the weights it names as the backbone initialises
    itself without a checkpoint.

    Args:
        arch (str | dict): ``'b'`` or a dict with ``embed_dims``,
            ``num_layers``, ``num_heads``, ``feedforward_channels``.
        img_size (int): Training input side; sizes the relative position
            tables of global blocks. Defaults to 1024.
        patch_size (int): Patch side. Defaults to 16.
        in_channels (int): Input channels. Defaults to 3.
        pretrain_img_size (int): Image side the position table was learned
            at. Defaults to 224.
        window_size (int): Window side of windowed blocks. Defaults to 14.
        global_attn_indexes (Sequence[int]): Blocks with global attention.
            Defaults to (2, 5, 8, 11).
        drop_path_rate (float): Stochastic depth, linearly increasing over
            blocks. Defaults to 0.1.
        init_cfg (dict, optional): Initialisation / pretrained checkpoint.
    """

    # Keys a pretraining checkpoint does not have (zero: no bias).
    NEW_KEYS = ('layers.*.attn.rel_pos_h', 'layers.*.attn.rel_pos_w')

    def __init__(self,
                 arch='b',
                 img_size: int = 1024,
                 patch_size: int = 16,
                 in_channels: int = 3,
                 pretrain_img_size: int = 224,
                 window_size: int = 14,
                 global_attn_indexes: Sequence[int] = (2, 5, 8, 11),
                 drop_path_rate: float = 0.1,
                 init_cfg: Optional[dict] = None):
        super().__init__(init_cfg=init_cfg)
        if isinstance(arch, str):
            if arch not in ARCHS:
                raise KeyError(f'ViTDetViT: unknown arch {arch!r}, choose '
                               f'from {sorted(ARCHS)} or pass a dict')
            arch = ARCHS[arch]
        missing = {
            'embed_dims', 'num_layers', 'num_heads', 'feedforward_channels'
        } - set(arch)
        if missing:
            raise KeyError(f'ViTDetViT: arch dict lacks {sorted(missing)}')
        dims, depth = arch['embed_dims'], arch['num_layers']
        bad = [i for i in global_attn_indexes if not 0 <= i < depth]
        if bad:
            raise ValueError(f'ViTDetViT: global_attn_indexes {bad} outside '
                             f'the {depth} blocks')
        self.embed_dims = dims
        self.patch_size = patch_size
        self.pretrain_grid = pretrain_img_size // patch_size

        self.patch_embed = PatchEmbed(
            in_channels=in_channels,
            embed_dims=dims,
            kernel_size=patch_size,
            stride=patch_size)
        # Same layout as pretraining: one cls position + the patch grid.
        self.pos_embed = nn.Parameter(
            torch.zeros(1, 1 + self.pretrain_grid**2, dims))
        grid = (img_size // patch_size, img_size // patch_size)
        dpr = torch.linspace(0, drop_path_rate, depth).tolist()
        self.layers = nn.ModuleList([
            ViTDetBlock(
                dims,
                arch['num_heads'],
                arch['feedforward_channels'],
                window_size=0 if i in global_attn_indexes else window_size,
                grid_size=grid,
                drop_path_rate=dpr[i]) for i in range(depth)
        ])

    def abs_pos_embed(self, size: Tuple[int, int]) -> torch.Tensor:
        """The patch position table (cls position dropped), bicubically
        resized to ``size``; (1, H, W, C)."""
        table = resize_pos_embed_to(self.pos_embed, size)
        return table[:, 1:].reshape(1, size[0], size[1], -1)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor]:
        x, (h, w) = self.patch_embed(x)
        x = x.view(x.shape[0], h, w, -1) + self.abs_pos_embed((h, w))
        for layer in self.layers:
            x = layer(x)
        return (x.permute(0, 3, 1, 2).contiguous(), )

    def init_weights(self):
        cfg = self.init_cfg
        if cfg and cfg.get('type') == 'Pretrained':
            keep_init = cfg.get('keep_init', ())
            if keep_init:
                # the weights kept start as the randomly initialised ViT's
                self._own_init()
            self.load_pretrained(
                cfg.get('checkpoint'),
                cfg.get('prefix', 'backbone.'),
                allow_partial=cfg.get('allow_partial', False),
                allow_dropped=cfg.get('allow_dropped', False),
                keep_init=keep_init)
            self._is_init = True
            return
        self._own_init()

    def _own_init(self) -> None:
        """The backbone's initialisation without a checkpoint: PyTorch's
        default layers and a truncated-normal position table."""
        init_cfg, self.init_cfg = self.init_cfg, None
        try:
            super().init_weights()
        finally:
            self.init_cfg = init_cfg
        nn.init.trunc_normal_(self.pos_embed, std=0.02)

    def load_pretrained(
        self,
        checkpoint: str,
        prefix: str = 'backbone.',
        allow_partial: bool = False,
        allow_dropped: bool = False,
        keep_init: Sequence[str] = ()) -> KeyReport:
        """Load the ``prefix`` part of a checkpoint through
        :func:`adapt_vit_checkpoint`, logging every key that is adapted,
        new or dropped.

        Every weight must come from the checkpoint except the relative
        position tables (``layers.*.attn.rel_pos_h`` / ``_w``: new in
        ViTDet, zero = no bias); a checkpoint that lacks others (a ResNet, a
        detector, a ViT of another depth) or has a tensor of a shape that
        cannot be adapted is refused before anything is loaded, naming the
        missing keys and what the file holds. The position table is resized
        to ``pretrain_img_size`` and a 1-channel patch embedding replicated
        over the input channels. ``allow_partial=True`` (``init_cfg``) loads
        a checkpoint that lacks some, logging the counts at WARNING.
        Checkpoint tensors the backbone has no place for (``cls_token``)
        are named at WARNING; a dropped tensor that changes what the
        backbone computes (the layer scale of an mmseg fine-tune that is not
        1, a non-zero relative position table) is refused unless
        ``allow_dropped=True`` (``init_cfg``). ``keep_init`` (``init_cfg``:
        ``fnmatch`` patterns of the backbone's keys, e.g. ``['pos_embed']``)
        leaves those weights as the backbone initialises itself without a
        checkpoint although the file holds them; the log names them.

        Returns:
            KeyReport: Where every key of the file went.

        Raises:
            ValueError: No key under ``prefix``, too few weights, wrong
                shapes, a dropped tensor that changes the function, or not
                a checkpoint.
        """
        if not checkpoint:
            raise ValueError(
                'ViTDetViT: init_cfg Pretrained has no checkpoint; pass '
                '--cfg-options model.backbone.init_cfg.checkpoint=PATH')
        state, report = adapt_vit_checkpoint(
            read_state_dict(checkpoint),
            self.state_dict(),
            model='ViTDetViT',
            checkpoint=checkpoint,
            prefix=prefix,
            allow_missing=self.NEW_KEYS,
            allow_partial=allow_partial,
            allow_dropped=allow_dropped,
            keep_init=keep_init)
        self.load_state_dict(state, strict=False)
        print_log(
            report.format(f'ViTDetViT <- {checkpoint}'), logger='current')
        return report
