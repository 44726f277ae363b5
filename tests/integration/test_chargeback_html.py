"""The chargeback HTML page in headless Chromium: it renders, with one stacked bar per team.

The page is the one the demo produces: the sandbox seed's Cost Explorer results for the
repository's team file, through the report's own parsing, arithmetic and rendering.
Needs /usr/bin/chromium (Debian package ``chromium``, which `make test` installs): without it
the tests fail rather than skip, so a machine that lacks it cannot pass them unseen.
"""

from __future__ import annotations

import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import chargeback as cb
from ansible_collections.hyperpod.tenancy.plugins.module_utils import instance_types

from sandbox.seed import load_sample
from sandbox.services.ce_tags import cost_and_usage_results

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
WIDTH, HEIGHT = 1000, 900



@pytest.fixture(autouse=True)
def _chromium_installed():
    assert CHROMIUM.exists(), "/usr/bin/chromium is absent: make system-packages (as root) installs it"


def _rgb(colour):
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def read_png(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, idat, header = 8, b"", None
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    width, height, depth, colour_type, _c, _f, interlace = header
    assert depth == 8 and colour_type in (2, 6) and interlace == 0, header
    channels = 3 if colour_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + predictor) & 0xFF
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        previous = line
    return width, height, rows


def column_runs(rows, colours, tolerance=24, solid=5):
    """[(first x, last x)] of adjacent columns that hold ``solid`` vertically adjacent pixels near one of ``colours``.

    Solid blocks are bars; anti-aliased text never stacks five matching pixels in a column.
    """

    def near(pixel):
        return any(sum(abs(a - b) for a, b in zip(pixel, c, strict=True)) <= tolerance for c in colours)

    hits = []
    for x in range(len(rows[0])):
        longest = streak = 0
        for row in rows:
            streak = streak + 1 if near(row[x]) else 0
            longest = max(longest, streak)
        hits.append(longest >= solid)
    runs, start = [], None
    for x, hit in enumerate(hits + [False]):
        if hit and start is None:
            start = x
        elif not hit and start is not None:
            runs.append((start, x - 1))
            start = None
    return runs


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    settings = load_sample()
    month = "2026-01"
    by_tag, by_usage = (r["ResultsByTime"] for r in cost_and_usage_results(settings, month)["results"])
    tag_key = settings["hyperpod_team_tag_keys"]["team"]
    cluster_costs, cluster_by_tag = cb.parse_cluster_costs(by_usage, tag_key)
    report = cb.compute(
        cb.month_period(month), cb.parse_tag_costs(by_tag, tag_key), cluster_costs,
        instance_types.cluster_capacity(settings["hyperpod_cluster"]["instance_groups"]), settings["hyperpod_teams"], cluster_by_tag=cluster_by_tag,
    )
    directory = tmp_path_factory.mktemp("chargeback")
    path = directory / "chargeback.html"
    path.write_text(cb.to_html(report))
    teams = [t["name"] for t in settings["hyperpod_teams"] if t.get("state", "present") == "present"]
    return path, directory, teams


def _chromium(directory, *args):
    profile = directory / ("profile-%d" % len(list(directory.iterdir())))
    profile.mkdir()
    return subprocess.run(
        [str(CHROMIUM), *FLAGS, "--user-data-dir=%s" % profile, *args], capture_output=True, text=True, timeout=120, check=True
    )


def test_the_dom_has_a_bar_per_team(page):
    path, directory, teams = page
    dom = _chromium(directory, "--dump-dom", path.as_uri()).stdout
    assert dom.count('<g class="bar team"') == len(teams)
    for team in teams:
        assert 'data-name="%s"' % team in dom
    assert dom.count('<g class="bar unallocated"') == 1
    assert "<svg" in dom and "<table>" in dom


def test_the_screenshot_shows_one_bar_per_team(page):
    path, directory, teams = page
    shot = directory / "chargeback.png"
    _chromium(directory, "--window-size=%d,%d" % (WIDTH, HEIGHT), "--screenshot=%s" % shot, path.as_uri())
    width, height, rows = read_png(shot)
    assert (width, height) == (WIDTH, HEIGHT)
    background = rows[0][0]
    painted = sum(1 for row in rows for pixel in row if pixel != background)
    assert painted > width * height // 50, "the page is (nearly) blank"
    # Bars are 56 px wide; legend swatches (12 px wide) are left out by the width.
    team_colours = [_rgb(cb.COLOURS["own"]), _rgb(cb.COLOURS["share"])]
    team_bars = [run for run in column_runs(rows, team_colours) if run[1] - run[0] + 1 >= 40]
    assert len(team_bars) == len(teams)
    unallocated = [run for run in column_runs(rows, [_rgb(cb.COLOURS["unallocated"])], tolerance=6) if run[1] - run[0] + 1 >= 40]
    assert len(unallocated) == 1
    assert unallocated[0][0] > team_bars[-1][1]
