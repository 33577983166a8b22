"""Synthetic data-parallel workloads, sized by parameters so a user can match their gradient size.

Each builds a model of about ``params`` parameters and a batch of random data of ``batch``
samples; the loss is a mean, so DDP averages gradients as a real job does.
"""

from __future__ import annotations

import math
from typing import Literal, get_args

import torch
from torch import nn

from dpscale.errors import N_, InvalidInput

__all__ = ["KINDS", "Kind", "build", "count"]

Kind = Literal["mlp", "cnn", "transformer"]
KINDS: tuple[str, ...] = get_args(Kind)


def _mlp(params: float) -> tuple[nn.Module, tuple[int, ...]]:
    # Four layers of width w: about 4·w² weights; the input is w wide too.
    width = max(8, int(math.sqrt(params / 4)))
    layers: list[nn.Module] = []
    for _ in range(3):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers.append(nn.Linear(width, width))
    return nn.Sequential(*layers), (width,)


def _cnn(params: float) -> tuple[nn.Module, tuple[int, ...]]:
    # Three 3×3 convolutions of c channels: about 18·c² weights, on 16×16 images.
    channels = max(4, int(math.sqrt(params / 18)))
    model = nn.Sequential(
        nn.Conv2d(3, channels, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(channels, channels, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(channels, channels, 3, padding=1),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(channels, 10),
    )
    return model, (3, 16, 16)


class _Transformer(nn.Module):
    def __init__(self, width: int, layers: int) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(
            width, nhead=max(1, width // 64), dim_feedforward=4 * width, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.head(self.encoder(x))
        return out


def _transformer(params: float) -> tuple[nn.Module, tuple[int, ...]]:
    # Two encoder layers of width w: about 2·12·w² weights, on sequences of 32 tokens.
    width = max(64, int(math.sqrt(params / 24)) // 64 * 64)
    return _Transformer(width, 2), (32, width)


def build(kind: str, params: float, batch: int, device: torch.device) -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    """The model, an input batch and a target of the same shape as the output."""
    builders = {"mlp": _mlp, "cnn": _cnn, "transformer": _transformer}
    if kind not in builders:
        raise InvalidInput("workload", kind, N_("one of %(choices)s"), params={"choices": ", ".join(KINDS)})
    model, shape = builders[kind](params)
    model = model.to(device)
    generator = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn((batch, *shape), generator=generator).to(device)
    with torch.no_grad():
        y = torch.randn_like(model(x))
    return model, x, y


def count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
