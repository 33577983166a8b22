from __future__ import annotations

import pytest

from dpscale import InvalidInput

pytestmark = pytest.mark.distributed


@pytest.mark.parametrize("kind", ["mlp", "cnn", "transformer"])
@pytest.mark.parametrize("params", [2e5, 4e6])
def test_workloads_are_sized_by_parameters(kind: str, params: float) -> None:
    import torch

    from dpscale.measure.workloads import build, count

    model, x, y = build(kind, params, 4, torch.device("cpu"))
    assert 0.5 * params <= count(model) <= 1.6 * params
    assert model(x).shape == y.shape
    assert x.shape[0] == 4


def test_unknown_workload() -> None:
    import torch

    from dpscale.measure.workloads import build

    with pytest.raises(InvalidInput, match="mlp, cnn, transformer"):
        build("resnet", 1e6, 4, torch.device("cpu"))
