"""The authors' colour transforms on a batch of images on the device.

Float32 tensors (B, 3, H, W) of RGB values in [0, 255], one factor per
image. Each function reproduces the Pillow formula of
``mmsiameseim.datasets.transforms.pillow_colour`` (the CPU pipeline's),
uint8 truncation or rounding after each step included, so that a batch on
the device is augmented as the CPU pipeline would augment each image:
brightness, contrast, saturation, grayscale and solarize give the same
values; hue (float32 HSV: at most 1 % of the pixels differ from Pillow's,
by at most 8 / 255) and blur (as the CPU pipeline's: at most 2 / 255)
agree within a tolerance (tests/test_models/test_data_preprocessors).
"""
import torch
import torch.nn.functional as F
from torch import Tensor

# Pillow's luma weights of R, G, B (16-bit fixed point)
_LUMA = (19595., 38470., 7471.)


def _per_image(values: Tensor) -> Tensor:
    return values.float().view(-1, 1, 1, 1)


def _blend(degenerate: Tensor, img: Tensor, factor: Tensor) -> Tensor:
    """Pillow's ``Image.blend(degenerate, img, factor)``: float32
    ``d + a * (x - d)``, clipped, truncated."""
    return ((img - degenerate) * _per_image(factor) + degenerate).clamp_(
        0, 255).trunc_()


def luma(img: Tensor) -> Tensor:
    """Pillow's ``convert('L')``: (B, 1, H, W)."""
    r, g, b = img[:, 0:1], img[:, 1:2], img[:, 2:3]
    weighted = r * _LUMA[0] + g * _LUMA[1] + b * _LUMA[2] + 32768.
    return torch.floor(weighted / 65536.)


def brightness(img: Tensor, factor: Tensor) -> Tensor:
    return _blend(torch.zeros_like(img), img, factor)


def contrast(img: Tensor, factor: Tensor) -> Tensor:
    mean = torch.floor(luma(img).mean(dim=(1, 2, 3), keepdim=True) + 0.5)
    return _blend(mean.expand_as(img), img, factor)


def saturation(img: Tensor, factor: Tensor) -> Tensor:
    return _blend(luma(img).expand_as(img), img, factor)


def grayscale(img: Tensor) -> Tensor:
    return luma(img).expand_as(img).contiguous()


def solarize(img: Tensor, threshold: float = 128.) -> Tensor:
    return torch.where(img >= threshold, 255. - img, img)


def rgb_to_hsv_uint8(img: Tensor):
    """Pillow's RGB -> HSV with uint8 channels (as float values)."""
    r, g, b = img[:, 0], img[:, 1], img[:, 2]
    maxc = torch.maximum(torch.maximum(r, g), b)
    minc = torch.minimum(torch.minimum(r, g), b)
    span = maxc - minc
    grey = span == 0
    span_ = torch.where(grey, torch.ones_like(span), span)
    rc, gc, bc = (maxc - r) / span_, (maxc - g) / span_, (maxc - b) / span_
    h = torch.where(r == maxc, bc - gc,
                    torch.where(g == maxc, 2.0 + rc - bc, 4.0 + gc - rc))
    h = torch.remainder(h / 6.0 + 1.0, 1.0)
    s = span_ / torch.where(grey, torch.ones_like(maxc), maxc)
    h = torch.where(grey, torch.zeros_like(h), torch.floor(h * 255.))
    s = torch.where(grey, torch.zeros_like(s), torch.floor(s * 255.))
    return h.clamp_(0, 255), s.clamp_(0, 255), maxc


def hsv_uint8_to_rgb(h: Tensor, s: Tensor, v: Tensor) -> Tensor:
    """Pillow's HSV -> RGB of uint8 channels (as float values)."""
    hf = h * 6.0 / 255.0
    i = torch.floor(hf)
    f = hf - i
    fs = s / 255.0
    p = torch.round(v * (1.0 - fs)).clamp_(0, 255)
    q = torch.round(v * (1.0 - fs * f)).clamp_(0, 255)
    t = torch.round(v * (1.0 - fs * (1.0 - f))).clamp_(0, 255)
    i = i.long() % 6
    choices = (  # sector -> (r, g, b)
        (v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q))
    out = []
    for c in range(3):
        channel = torch.zeros_like(v)
        for sector, rgb in enumerate(choices):
            channel = torch.where(i == sector, rgb[c], channel)
        out.append(torch.where(s == 0, v, channel))
    return torch.stack(out, dim=1)


def hue(img: Tensor, factor: Tensor) -> Tensor:
    """Torchvision's PIL ``adjust_hue``: the uint8 hue shifted by ``int(factor
    * 255)`` modulo 256."""
    h, s, v = rgb_to_hsv_uint8(img)
    shift = torch.trunc(factor.float() * 255.).view(-1, 1, 1)
    h = torch.remainder(h + shift, 256.)
    return hsv_uint8_to_rgb(h, s, v)


def box_radius(sigma: Tensor, passes: int = 3) -> Tensor:
    """Pillow's ``_gaussian_blur_radius``, per image."""
    sigma2 = sigma.float() * sigma.float() / passes
    length = torch.sqrt(12.0 * sigma2 + 1.0)
    whole = torch.floor((length - 1.0) / 2.0)
    frac = (2 * whole + 1) * (whole * (whole + 1) - 3 * sigma2)
    frac = frac / (6 * (sigma2 - (whole + 1) * (whole + 1)))
    return whole + frac


def box_kernels(sigma: Tensor, passes: int = 3) -> Tensor:
    """(B, K) kernels of Pillow's fractional box blur (fixed-point weights),
    centred, zero-padded to the longest."""
    box = box_radius(sigma, passes)
    whole = torch.floor(box)
    full = torch.floor(16777216. / (box * 2 + 1))
    edge = torch.floor((16777216. - (whole * 2 + 1) * full) / 2)
    half = int(whole.max().item()) + 1
    offsets = torch.arange(-half, half + 1, device=sigma.device).abs()
    offsets = offsets.view(1, -1).float()
    w = whole.view(-1, 1)
    weights = torch.where(
        offsets <= w, full.view(-1, 1),
        torch.where(offsets == w + 1, edge.view(-1, 1),
                    torch.zeros_like(offsets)))
    return weights / 16777216.


def gaussian_blur(img: Tensor, sigma: Tensor, passes: int = 3) -> Tensor:
    """Pillow's ``GaussianBlur(radius=sigma)`` per image: ``passes`` horizontal
    then vertical fractional box blurs, edges repeated, rounded after each
    pass."""
    batch, channels, height, width = img.shape
    kernels = box_kernels(sigma, passes)
    k = kernels.shape[1]
    weight = kernels.repeat_interleave(channels, 0)  # (B*C, K)
    x = img.reshape(1, batch * channels, height, width)
    for _ in range(passes):
        x = F.pad(x, (k // 2, k // 2, 0, 0), mode='replicate')
        x = torch.floor(
            F.conv2d(x, weight.view(-1, 1, 1, k), groups=batch * channels) +
            0.5)
    for _ in range(passes):
        x = F.pad(x, (0, 0, k // 2, k // 2), mode='replicate')
        x = torch.floor(
            F.conv2d(x, weight.view(-1, 1, k, 1), groups=batch * channels) +
            0.5)
    return x.view(batch, channels, height, width)
