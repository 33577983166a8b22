"""The take-away finds a definition's edges once (export._edges): what it writes follows the inputs given."""

from __future__ import annotations

from urllib.parse import quote_plus

from dpscale.calculators.scale import SCALING
from dpscale.web.export import api_call, command_of

VALUES = {"devices": 64, "per_device_throughput": 2000.0, "efficiency": 0.9, "unit": "échantillons/s"}


def test_other_inputs_are_written_as_they_are_not_as_the_first() -> None:
    before = command_of("scaling", SCALING.inputs, VALUES)
    assert before.args[-2:] == ("--unit", "échantillons/s")
    # The same definition, its unit taken by the API alone and renamed there: a new tuple, read afresh.
    changed = tuple(
        item._replace(edges=("api",), api=item.api._replace(name="débit unit")) if item.name == "unit" else item
        for item in SCALING.inputs
    )
    after = command_of("scaling", changed, VALUES)
    assert after.left_out == ("unit",)
    assert "--unit" not in after.args
    call = api_call("scaling", changed, VALUES, "http://testserver/", posted=False, texts={})
    assert f"{quote_plus('débit unit')}={quote_plus('échantillons/s')}" in call
    # And the first inputs again: as before.
    assert command_of("scaling", SCALING.inputs, VALUES) == before


def test_an_option_renamed_is_written_by_its_new_name() -> None:
    renamed = tuple(
        item._replace(cli=item.cli._replace(option="--label")) if item.name == "unit" else item
        for item in SCALING.inputs
    )
    assert command_of("scaling", renamed, VALUES).args[-2:] == ("--label", "échantillons/s")
    assert command_of("scaling", SCALING.inputs, VALUES).args[-2:] == ("--unit", "échantillons/s")
