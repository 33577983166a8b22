"""Tables for the terminal (Rich), in the user's language."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from dpscale.format import format_number, format_percent, format_speedup
from dpscale.i18n import Lang, translation
from dpscale.scaling import Solution


def print_scaling(solution: Solution, lang: Lang, console: Console | None = None) -> None:
    _ = translation(lang).gettext
    s = solution.scaling
    unit = s.unit

    def throughput(x: float) -> str:
        return f"{format_number(x, lang)} {unit}"

    rows = [
        ("devices", _("Devices (d)"), format_number(s.devices, lang)),
        ("per_device_throughput", _("Per-device throughput (v)"), throughput(s.per_device_throughput)),
        ("efficiency", _("Scaling efficiency (E)"), format_percent(s.efficiency, lang)),
        (None, _("Ideal throughput (I = d·v)"), throughput(s.ideal_throughput)),
        ("actual_throughput", _("Actual throughput (A = I·E)"), throughput(s.actual_throughput)),
        (None, _("Speedup (S = d·E)"), format_speedup(s.speedup, lang)),
        (None, _("Lost throughput (I − A)"), throughput(s.lost_throughput)),
    ]
    table = Table(box=box.SIMPLE, show_header=False, show_edge=False, pad_edge=False)
    table.add_column(justify="left")
    table.add_column(justify="right")
    solved = _("solved")
    for key, label, value in rows:
        if solution.unknown != "actual_throughput" and key == solution.unknown:
            table.add_row(f"[bold]{label}[/bold]", f"[bold]{value}[/bold]  ← {solved}")
        else:
            table.add_row(label, value)
    out = console or Console(highlight=False)
    out.print(table)
    if solution.target_throughput is not None and solution.surplus_throughput > 0:
        out.print(
            _("Target {target}: {devices} devices give {surplus} more.").format(
                target=throughput(solution.target_throughput),
                devices=format_number(s.devices, lang),
                surplus=throughput(solution.surplus_throughput),
            ),
            highlight=False,
        )
