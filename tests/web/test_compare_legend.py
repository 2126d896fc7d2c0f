"""The comparison page's legend: the run page's own partials, the grid's key in every column and
the legend panel once, with its Devices key only where the runs have DRA devices."""

from __future__ import annotations

from django.test import Client

from kubeviz.web.models import Comparison, Run
from kubeviz.web.services import comparisons as service

from .test_compare import make, run_all


def page(client: Client, comparison: Comparison) -> str:
    response = client.get(comparison.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


def legend_of(body: str) -> str:
    start = body.index('<details id="run-legend"')
    return body[start : body.index("</details>", start)]


def test_every_column_has_the_grids_key_and_the_page_the_legend(
    client: Client, builtins: None, started: list[Run]
) -> None:
    """bin-packing vs spread: no devices, so no Devices key; no cycle panel in a column, so none in the legend."""
    comparison = make("bin-packing-vs-spread", ["spread", "bin-packing"])
    run_all(comparison)
    body = page(client, comparison)
    for column in (0, 1):
        start = body.index(f'<section class="nodes" id="c{column}-run-nodes">')
        nodes = body[start : body.index("</section>", start)]
        assert '<span class="grid-legend small muted" aria-label="Legend">' in nodes
        assert '<span class="shade-key"><i class="cell a0"></i> no pods' in nodes
    legend = legend_of(body)
    assert body.count('<details id="run-legend"') == 1
    assert "<h3>Node bars</h3>" in legend
    assert "<h3>Grid cells" in legend
    assert "<h3>Devices" not in legend
    assert "<h3>Cycle panel</h3>" not in legend
    assert 'href="#run-legend"' in body
    assert not service.shows_devices(comparison)


def test_the_dra_comparison_has_the_devices_key(client: Client, builtins: None, started: list[Run]) -> None:
    """dra-vs-fgd-sharing: both runs publish ResourceSlices, so the legend explains devices."""
    comparison = make("dra-vs-fgd-sharing", ["gpu-fgd", "default"])
    run_all(comparison)
    legend = legend_of(page(client, comparison))
    assert '<section class="legend-devices">' in legend
    assert '<ul class="legend-list dra-legend">' in legend
    assert 'title="90–100% of its devices in use"' in legend  # the purple ramp says what it means on hover
    assert "<h3>Cycle panel</h3>" not in legend


def test_the_devices_key_waits_for_t0_to_be_recorded(client: Client, builtins: None, started: list[Run]) -> None:
    """Before its runs have recorded t = 0 the page cannot tell whether they have devices: it keeps the key."""
    comparison = make("bin-packing-vs-spread", ["spread", "bin-packing"])
    assert service.shows_devices(comparison)
    assert '<section class="legend-devices">' in legend_of(page(client, comparison))
    run_all(comparison)
    assert not service.shows_devices(comparison)


def test_the_run_page_keeps_its_whole_legend(client: Client, finished_run: Run) -> None:
    """The run page includes the same partial without the comparison's switches: every section."""
    body = client.get(finished_run.get_absolute_url()).content.decode()
    legend = legend_of(body)
    assert "<h3>Devices" in legend
    assert "<h3>Cycle panel</h3>" in legend
    assert body.count('<span class="grid-legend small muted" aria-label="Legend">') == 1
