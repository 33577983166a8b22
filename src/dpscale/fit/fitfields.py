"""What ``fit`` takes, defined once (see :mod:`dpscale.inputs`): the measurements, the sizes to
predict at and the models to fit. The command line reads the measurements from a file, the page
from the text pasted into it (never a path on the server), the API from its JSON body."""

from __future__ import annotations

from dpscale import _validate
from dpscale.fit.fitting import fit
from dpscale.fit.laws import MODELS
from dpscale.fit.results import Fit
from dpscale.inputs import Cli, Definition, Input, Page, Values

__all__ = ["AT", "AUTO", "FIT", "MAX_POINTS", "MAX_SIZES", "models_named"]

AUTO = "auto"  # every model, ranked by AICc
MAX_POINTS = 10_000  # measurements one fit takes (a file's bound too: dpscale._files)
MAX_SIZES = 256  # sizes one fit predicts at


def models_named(text: str | None) -> list[str] | None:
    """The models ``text`` names (``amdahl,usl``); None for all of them (``auto``, or nothing)."""
    if text is None or text.strip().lower() in ("", AUTO):
        return None
    return [name.strip().lower() for name in text.split(",")]  # fit() says which name it does not know


def _build(values: Values) -> Fit:
    v = FIT.complete(values)
    return fit(v["measurements"], models=models_named(v["model"]), at=v["at"] or [])


# DLPerf's NVIDIA PyTorch ResNet-50 FP32 medians, 1 to 16 V100s (see the README).
EXAMPLE = "devices,throughput\n1,367.29\n4,1449.48\n8,2887.65\n16,5716.79"

AT = Input(
    "at",
    "device_list",
    "Sizes to predict: 128,256,512 or 64..1024.",
    low=1,
    high=_validate.MAX_DEVICES,
    page=Page(example=("32; 64; 128", "32, 64, 128")),
)  # the API's body states the same bounds

FIT = Definition(
    "fit",
    (
        Input(
            "measurements",
            "measurements",
            "CSV (devices,throughput columns) or JSON lines from dpscale measure.",
            required=True,
            cli=Cli(positional=True),
            page=Page(example=(EXAMPLE, EXAMPLE)),
        ),
        AT,
        Input(
            "model",
            "text",
            f"{AUTO} (all, ranked by AICc) or {', '.join(MODELS)}.",
            default=AUTO,
            cli=Cli(short="-m"),
            page=Page(example=(AUTO, AUTO)),
        ),
    ),
    _build,
)
