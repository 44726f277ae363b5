"""The idle-capacity page in headless Chromium: a chart per instance type, a stacked bar per day.

The page is made from the month read through the sandbox's AMP from the real Prometheus of
tests/integration/usage_month.py, through the report's own arithmetic and rendering.
"""

from __future__ import annotations

import re

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import chargeback, idle_report
from ansible_collections.hyperpod.tenancy.plugins.module_utils import usage as us

from tests.integration.test_chargeback_html import CHROMIUM, _chromium, _rgb, column_runs, read_png
from tests.integration.test_usage_reader import _reader
from tests.integration.usage_month import CAPACITY, MONTH, TEAMS

WIDTH, HEIGHT = 900, 900


@pytest.fixture
def page(sandbox, amp_workspace, tmp_path):
    assert CHROMIUM.exists(), "/usr/bin/chromium is absent: make system-packages (as root) installs it"
    usage = us.read_month(_reader(sandbox, amp_workspace), TEAMS, CAPACITY, chargeback.month_period(MONTH), step=3600)
    rows = idle_report.rows(usage, CAPACITY)
    path = tmp_path / "usage.html"
    path.write_text(idle_report.to_html(usage, rows))
    return path, rows


def test_the_dom_has_a_chart_per_type_and_a_bar_per_day(page):
    path, rows = page
    dom = _chromium(path.parent, "--dump-dom", path.as_uri()).stdout
    charts = re.findall(r'<svg[^>]*data-instance-type="([^"]+)"', dom)
    assert sorted(charts) == sorted(CAPACITY)
    assert dom.count('<g class="day"') == 28 * len(CAPACITY)
    # The bars carry the table's figures: g5 on 8 February, nlp's borrowing over, 16 GPUs x 24 h idle.
    assert 'data-day="2026-02-08" data-busy="%s" data-admitted="192.00" data-idle="384.00"' % "19.20" in dom
    assert "<table>" in dom and dom.count('<tr class="month">') == len(CAPACITY)


def test_the_screenshot_shows_the_daily_bars(page):
    path, _rows = page
    shot = path.parent / "usage.png"
    _chromium(path.parent, "--window-size=%d,%d" % (WIDTH, HEIGHT), "--screenshot=%s" % shot, path.as_uri())
    width, height, pixels = read_png(shot)
    assert (width, height) == (WIDTH, HEIGHT)
    # Bars are 16 px wide, legend swatches 10: keep runs of 14 px and more. The two charts are stacked,
    # one above the other, so their days share columns: 28 of them.
    bars = [r for r in column_runs(pixels, [_rgb(idle_report.COLOURS[k]) for k in ("busy", "admitted_not_busy", "idle")], tolerance=6)
            if r[1] - r[0] + 1 >= 14]
    assert len(bars) == 28
    busy = [r for r in column_runs(pixels, [_rgb(idle_report.COLOURS["busy"])], tolerance=6) if r[1] - r[0] + 1 >= 14]
    assert len(busy) == 28  # something was busy every day (research's 10 %, nlp's p5)
    idle = [r for r in column_runs(pixels, [_rgb(idle_report.COLOURS["idle"])], tolerance=6) if r[1] - r[0] + 1 >= 14]
    assert len(idle) == 28  # and something idle every day (p5: audio's and nlp's unused quota)
